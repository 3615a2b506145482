// Microsoft.Azure.Cosmos.Table 1.0.8 against a Storage endpoint: the successor of WindowsAzure.Storage's
// Table client (same API family, synchronous methods included), as services migrated to it use it.
using Microsoft.Azure.Cosmos.Table;
using Xunit;

namespace Tablestone.E2E.Legacy.CosmosTable;

public class Item : TableEntity
{
    public Item() { }
    public Item(string pk, string rk) : base(pk, rk) { }
    public string? Label { get; set; }
    public int Count { get; set; }
    public long Big { get; set; }
    public double Ratio { get; set; }
    public bool On { get; set; }
    public DateTime At { get; set; }
    public Guid Ref { get; set; }
    public byte[]? Raw { get; set; }
}

[Collection("server")]
public class CosmosTableTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;
    private static readonly DateTime At = new DateTime(2021, 3, 4, 5, 6, 7, DateTimeKind.Utc).AddTicks(7654321);

    /// <summary>A CloudTable on a SAS. In the localhost shape the legacy SDKs cannot make one: with no account
    /// name in the credentials they take it from the host's first DNS label and fail on a host without a dot
    /// (ArgumentOutOfRangeException from NavigationHelper.GetAccountNameFromUri; docs/compatibility-notes/e2e.md).
    /// That failure is asserted, then the SAS is used through 127.0.0.1, which they read path-style.</summary>
    private CloudTable SasTable(Uri tableUri, string sas)
    {
        if (_s.Host == "localhost")
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new CloudTable(tableUri, new StorageCredentials(sas)));
            tableUri = new UriBuilder(tableUri) { Host = "127.0.0.1" }.Uri;
        }
        return new CloudTable(tableUri, new StorageCredentials(sas));
    }

    private CloudTable NewTable(TablePayloadFormat format = TablePayloadFormat.Json)
    {
        var client = CloudStorageAccount.Parse(_s.ConnectionString).CreateCloudTableClient();
        client.DefaultRequestOptions.PayloadFormat = format;
        client.DefaultRequestOptions.RetryPolicy = new NoRetry();
        var table = client.GetTableReference(Names.Unique("c"));
        Assert.True(table.CreateIfNotExists());
        return table;
    }

    private static Item Sample(string pk, string rk, int n) => new(pk, rk)
    {
        Label = $"l'{n}", Count = n, Big = (1L << 50) + n, Ratio = n / 4.0, On = n % 2 == 1, At = At.AddHours(n),
        Ref = new Guid(n, 2, 3, new byte[8]), Raw = new byte[] { (byte)n },
    };

    [Fact]
    public void DevelopmentStorageAccount_IsPort10002()
    {
        Assert.Equal(new Uri("http://127.0.0.1:10002/devstoreaccount1"), CloudStorageAccount.DevelopmentStorageAccount.TableEndpoint);
    }

    [Fact]
    public void Crud_And_Errors()
    {
        var table = NewTable();
        var r = table.Execute(TableOperation.Insert(Sample("p", "r", 2)));
        Assert.Equal(204, r.HttpStatusCode);
        var got = (Item)table.Execute(TableOperation.Retrieve<Item>("p", "r")).Result;
        Assert.Equal(("l'2", 2, (1L << 50) + 2, 0.5, false), (got.Label, got.Count, got.Big, got.Ratio, got.On));
        Assert.Equal(At.AddHours(2), got.At.ToUniversalTime());
        Assert.Equal(new Guid(2, 2, 3, new byte[8]), got.Ref);
        Assert.Equal(new byte[] { 2 }, got.Raw);

        got.Count = 20;
        table.Execute(TableOperation.Merge(got));
        var stale = Sample("p", "r", 1);
        stale.ETag = r.Etag;
        var e = Assert.Throws<StorageException>(() => table.Execute(TableOperation.Replace(stale)));
        Assert.Equal(412, e.RequestInformation.HttpStatusCode);
        Assert.Equal("UpdateConditionNotSatisfied", e.RequestInformation.ExtendedErrorInformation.ErrorCode);
        var dup = Assert.Throws<StorageException>(() => table.Execute(TableOperation.Insert(Sample("p", "r", 1))));
        Assert.Equal(409, dup.RequestInformation.HttpStatusCode);
        Assert.Equal("EntityAlreadyExists", dup.RequestInformation.ExtendedErrorInformation.ErrorCode);
        Assert.Equal(404, table.Execute(TableOperation.Retrieve<Item>("p", "none")).HttpStatusCode);

        table.Execute(TableOperation.InsertOrMerge(new DynamicTableEntity("p", "r", "*", new Dictionary<string, EntityProperty> { ["X"] = new("y") })));
        var dyn = (DynamicTableEntity)table.Execute(TableOperation.Retrieve("p", "r")).Result;
        Assert.Equal("y", dyn.Properties["X"].StringValue);
        Assert.Equal(20, dyn.Properties["Count"].Int32Value);
        table.Execute(TableOperation.InsertOrReplace(new DynamicTableEntity("p", "r")));
        Assert.Empty(((DynamicTableEntity)table.Execute(TableOperation.Retrieve("p", "r")).Result).Properties);
        table.Execute(TableOperation.Delete(new DynamicTableEntity("p", "r") { ETag = "*" }));
        Assert.True(table.DeleteIfExists());
        Assert.False(table.Exists());
    }

    [Theory]
    [InlineData(TablePayloadFormat.Json)]
    [InlineData(TablePayloadFormat.JsonNoMetadata)]
    [InlineData(TablePayloadFormat.JsonFullMetadata)]
    public void PayloadFormats(TablePayloadFormat format)
    {
        var table = NewTable(format);
        table.Execute(TableOperation.Insert(Sample("p", "r", 6)));
        var got = Assert.Single(table.ExecuteQuery(new TableQuery<Item>()));
        Assert.Equal((1L << 50) + 6, got.Big);
        Assert.Equal(At.AddHours(6), got.At.ToUniversalTime());
        Assert.Equal(new Guid(6, 2, 3, new byte[8]), got.Ref);
    }

    [Fact]
    public void Batch_Query_Segments_Resolver_Sas()
    {
        var table = NewTable();
        var batch = new TableBatchOperation();
        for (var i = 0; i < 100; i++) batch.Insert(Sample("p", $"{i:D3}", i));
        Assert.Equal(100, table.ExecuteBatch(batch).Count);

        var failing = new TableBatchOperation();
        failing.InsertOrReplace(Sample("p", "zzz", 1));
        failing.Insert(Sample("p", "000", 1));
        var e = Assert.Throws<StorageException>(() => table.ExecuteBatch(failing));
        Assert.Equal(409, e.RequestInformation.HttpStatusCode);
        Assert.Equal(404, table.Execute(TableOperation.Retrieve("p", "zzz")).HttpStatusCode);

        var query = new TableQuery<Item>().Where(TableQuery.CombineFilters(
            TableQuery.GenerateFilterConditionForInt("Count", QueryComparisons.GreaterThanOrEqual, 50), TableOperators.And,
            TableQuery.GenerateFilterConditionForBool("On", QueryComparisons.Equal, true))).Take(10);
        var counts = new List<int>();
        TableContinuationToken? token = null;
        var segments = 0;
        do
        {
            var seg = table.ExecuteQuerySegmented(query, token);
            counts.AddRange(seg.Results.Select(x => x.Count));
            token = seg.ContinuationToken;
            segments++;
        } while (token != null);
        Assert.Equal(Enumerable.Range(50, 50).Where(i => i % 2 == 1), counts);
        Assert.Equal(3, segments);
        Assert.Single(table.ExecuteQuery(new TableQuery<Item>().Where(TableQuery.GenerateFilterCondition("Label", QueryComparisons.Equal, "l'42"))));
        Assert.Single(table.ExecuteQuery(new TableQuery<Item>().Where(
            TableQuery.GenerateFilterConditionForDate("At", QueryComparisons.Equal, new DateTimeOffset(At.AddHours(7))))));

        EntityResolver<int> resolver = (pk, rk, ts, props, etag) => props["Count"].Int32Value!.Value;
        var resolved = table.ExecuteQuery(new TableQuery().Select(new[] { "Count" }).Where(
            TableQuery.GenerateFilterConditionForLong("Big", QueryComparisons.LessThan, (1L << 50) + 3)), resolver).ToList();
        Assert.Equal(new[] { 0, 1, 2 }, resolved);

        var sas = table.GetSharedAccessSignature(new SharedAccessTablePolicy
        {
            Permissions = SharedAccessTablePermissions.Query, SharedAccessExpiryTime = DateTimeOffset.UtcNow.AddHours(1),
        }, null, "p", "010", "p", "019");
        var limited = SasTable(table.Uri, sas);
        Assert.Equal(10, limited.ExecuteQuery(new TableQuery()).Count());
        var denied = Assert.Throws<StorageException>(() => limited.Execute(TableOperation.Retrieve("p", "020")));
        Assert.Equal(403, denied.RequestInformation.HttpStatusCode);
    }
}
