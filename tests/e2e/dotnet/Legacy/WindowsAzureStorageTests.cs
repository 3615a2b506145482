// WindowsAzure.Storage 9.3.3 (the last release with the Table client; its .NET Standard build has only the
// asynchronous methods). Covers what services still on it use: CloudTable with TableEntity subclasses and
// DynamicTableEntity, TableOperation and TableBatchOperation, TableQuery filters, segmented queries with
// TableContinuationToken, EntityResolver, the three JSON payload formats, and SAS.
using System.Net;
using Microsoft.WindowsAzure.Storage;
using Microsoft.WindowsAzure.Storage.Auth;
using Microsoft.WindowsAzure.Storage.RetryPolicies;
using Microsoft.WindowsAzure.Storage.Table;
using Xunit;

namespace Tablestone.E2E.Legacy.WindowsAzureStorage;

public class Customer : TableEntity
{
    public Customer() { }
    public Customer(string pk, string rk) : base(pk, rk) { }
    public string? Name { get; set; }
    public int Age { get; set; }
    public long Balance { get; set; }
    public double Score { get; set; }
    public bool Active { get; set; }
    public DateTime Joined { get; set; }
    public DateTimeOffset? LastSeen { get; set; }
    public Guid Id { get; set; }
    public byte[]? Avatar { get; set; }
}

[Collection("server")]
public class WindowsAzureStorageTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;
    private static readonly DateTime Joined = new DateTime(2020, 5, 6, 7, 8, 9, DateTimeKind.Utc).AddTicks(1234567);

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

    private CloudTableClient Client(TablePayloadFormat format = TablePayloadFormat.Json)
    {
        var client = CloudStorageAccount.Parse(_s.ConnectionString).CreateCloudTableClient();
        client.DefaultRequestOptions.PayloadFormat = format;
        client.DefaultRequestOptions.RetryPolicy = new NoRetry();
        return client;
    }

    private async Task<CloudTable> NewTable(TablePayloadFormat format = TablePayloadFormat.Json)
    {
        var table = Client(format).GetTableReference(Names.Unique("w"));
        Assert.True(await table.CreateIfNotExistsAsync());
        return table;
    }

    private static Customer Sample(string pk, string rk, int age) => new(pk, rk)
    {
        Name = $"n'{age}", Age = age, Balance = (1L << 40) + age, Score = age + 0.25, Active = age % 2 == 0,
        Joined = Joined.AddDays(age), LastSeen = null, Id = new Guid(age, 1, 2, new byte[8]), Avatar = new byte[] { 1, (byte)age },
    };

    [Fact]
    public void DevelopmentStorageAccount_IsPort10002()
    {
        var account = CloudStorageAccount.DevelopmentStorageAccount;
        Assert.Equal(new Uri("http://127.0.0.1:10002/devstoreaccount1"), account.TableEndpoint);
        Assert.Equal(account.TableEndpoint, CloudStorageAccount.Parse("UseDevelopmentStorage=true").TableEndpoint);
    }

    [Fact]
    public async Task Crud_TypedEntity_EveryType()
    {
        var table = await NewTable();
        Assert.False(await table.CreateIfNotExistsAsync());
        var insert = await table.ExecuteAsync(TableOperation.Insert(Sample("p", "r", 3)));
        Assert.Equal(204, insert.HttpStatusCode);
        Assert.False(string.IsNullOrEmpty(insert.Etag));

        var got = (Customer)(await table.ExecuteAsync(TableOperation.Retrieve<Customer>("p", "r"))).Result;
        Assert.Equal("n'3", got.Name);
        Assert.Equal(3, got.Age);
        Assert.Equal((1L << 40) + 3, got.Balance);
        Assert.Equal(3.25, got.Score);
        Assert.False(got.Active);
        Assert.Equal(Joined.AddDays(3), got.Joined.ToUniversalTime());
        Assert.Null(got.LastSeen);
        Assert.Equal(new Guid(3, 1, 2, new byte[8]), got.Id);
        Assert.Equal(new byte[] { 1, 3 }, got.Avatar);
        Assert.Equal(insert.Etag, got.ETag);

        got.Age = 30;
        await table.ExecuteAsync(TableOperation.Replace(got));
        var stale = Sample("p", "r", 4);
        stale.ETag = insert.Etag;
        var e = await Assert.ThrowsAsync<StorageException>(() => table.ExecuteAsync(TableOperation.Merge(stale)));
        Assert.Equal(412, e.RequestInformation.HttpStatusCode);
        Assert.Equal("UpdateConditionNotSatisfied", e.RequestInformation.ExtendedErrorInformation.ErrorCode);

        var dup = await Assert.ThrowsAsync<StorageException>(() => table.ExecuteAsync(TableOperation.Insert(Sample("p", "r", 1))));
        Assert.Equal(409, dup.RequestInformation.HttpStatusCode);
        Assert.Equal("EntityAlreadyExists", dup.RequestInformation.ExtendedErrorInformation.ErrorCode);

        var missing = await table.ExecuteAsync(TableOperation.Retrieve<Customer>("p", "none"));
        Assert.Equal(404, missing.HttpStatusCode);
        Assert.Null(missing.Result);

        var dyn = new DynamicTableEntity("p", "r") { ETag = "*" };
        dyn.Properties["Extra"] = new EntityProperty("x");
        await table.ExecuteAsync(TableOperation.Merge(dyn));
        var back = (DynamicTableEntity)(await table.ExecuteAsync(TableOperation.Retrieve("p", "r"))).Result;
        Assert.Equal("x", back.Properties["Extra"].StringValue);
        Assert.Equal(30, back.Properties["Age"].Int32Value);
        Assert.Equal(EdmType.Int64, back.Properties["Balance"].PropertyType);
        Assert.Equal(EdmType.DateTime, back.Properties["Joined"].PropertyType);

        await table.ExecuteAsync(TableOperation.InsertOrReplace(new DynamicTableEntity("p", "r")));
        back = (DynamicTableEntity)(await table.ExecuteAsync(TableOperation.Retrieve("p", "r"))).Result;
        Assert.Empty(back.Properties);
        await table.ExecuteAsync(TableOperation.InsertOrMerge(Sample("p", "r", 5)));
        await table.ExecuteAsync(TableOperation.Delete(new DynamicTableEntity("p", "r") { ETag = "*" }));
        Assert.Equal(404, (await table.ExecuteAsync(TableOperation.Retrieve("p", "r"))).HttpStatusCode);
        Assert.True(await table.DeleteIfExistsAsync());
    }

    [Theory]
    [InlineData(TablePayloadFormat.Json)]
    [InlineData(TablePayloadFormat.JsonNoMetadata)]
    [InlineData(TablePayloadFormat.JsonFullMetadata)]
    public async Task PayloadFormats_TypedEntitiesRoundTrip(TablePayloadFormat format)
    {
        var table = await NewTable(format);
        await table.ExecuteAsync(TableOperation.Insert(Sample("p", "r", 8)));
        var got = (Customer)(await table.ExecuteAsync(TableOperation.Retrieve<Customer>("p", "r"))).Result;
        Assert.Equal((1L << 40) + 8, got.Balance);
        Assert.Equal(Joined.AddDays(8), got.Joined.ToUniversalTime());
        Assert.Equal(new Guid(8, 1, 2, new byte[8]), got.Id);
        Assert.Equal(new byte[] { 1, 8 }, got.Avatar);
        var rows = (await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>(), null)).Results;
        Assert.Equal(8, Assert.Single(rows).Age);
    }

    [Fact]
    public async Task Batch_AllOperations_AndFailure()
    {
        var table = await NewTable();
        await table.ExecuteAsync(TableOperation.Insert(Sample("p", "del", 1)));
        await table.ExecuteAsync(TableOperation.Insert(Sample("p", "rep", 2)));
        var batch = new TableBatchOperation();
        batch.Insert(Sample("p", "ins", 3));
        batch.Delete(new DynamicTableEntity("p", "del") { ETag = "*" });
        batch.Replace(new DynamicTableEntity("p", "rep", "*", new Dictionary<string, EntityProperty> { ["Only"] = new(true) }));
        batch.InsertOrMerge(Sample("p", "iom", 4));
        batch.InsertOrReplace(Sample("p", "ior", 5));
        Assert.Throws<ArgumentException>(() => batch.Retrieve<Customer>("p", "x"));  // a retrieve must be alone
        var results = await table.ExecuteBatchAsync(batch);
        // The SDK asks for no echo of an insert (Prefer: return-no-content): every part is 204.
        Assert.Equal(new[] { 204, 204, 204, 204, 204 }, results.Select(r => r.HttpStatusCode));

        var hundred = new TableBatchOperation();
        for (var i = 0; i < 100; i++) hundred.Insert(Sample("q", $"{i:D3}", i));
        Assert.Equal(100, (await table.ExecuteBatchAsync(hundred)).Count);

        var failing = new TableBatchOperation();
        failing.Insert(Sample("p", "new", 1));
        failing.Insert(Sample("p", "ins", 1));
        var e = await Assert.ThrowsAsync<StorageException>(() => table.ExecuteBatchAsync(failing));
        Assert.Equal(409, e.RequestInformation.HttpStatusCode);
        Assert.Equal("EntityAlreadyExists", e.RequestInformation.ExtendedErrorInformation.ErrorCode);
        Assert.StartsWith("1:", e.RequestInformation.ExtendedErrorInformation.ErrorMessage);
        Assert.Equal(404, (await table.ExecuteAsync(TableOperation.Retrieve("p", "new"))).HttpStatusCode);

        // A retrieve alone in a batch.
        var retrieve = new TableBatchOperation();
        retrieve.Retrieve<Customer>("p", "iom");
        var got = Assert.Single(await table.ExecuteBatchAsync(retrieve));
        Assert.Equal(4, ((Customer)got.Result).Age);
    }

    [Fact]
    public async Task Queries_Filters_Segments_Resolver()
    {
        var table = await NewTable();
        var batch = new TableBatchOperation();
        for (var i = 0; i < 40; i++) batch.Insert(Sample("p", $"{i:D3}", i));
        await table.ExecuteBatchAsync(batch);

        var filter = TableQuery.CombineFilters(
            TableQuery.GenerateFilterCondition("PartitionKey", QueryComparisons.Equal, "p"), TableOperators.And,
            TableQuery.CombineFilters(
                TableQuery.GenerateFilterConditionForInt("Age", QueryComparisons.GreaterThanOrEqual, 10), TableOperators.And,
                TableQuery.GenerateFilterConditionForLong("Balance", QueryComparisons.LessThan, (1L << 40) + 20)));
        var query = new TableQuery<Customer>().Where(filter).Take(4);
        var ages = new List<int>();
        var segments = 0;
        TableContinuationToken? token = null;
        do
        {
            var seg = await table.ExecuteQuerySegmentedAsync(query, token);
            Assert.True(seg.Results.Count <= 4);
            ages.AddRange(seg.Results.Select(c => c.Age));
            token = seg.ContinuationToken;
            segments++;
        } while (token != null);
        Assert.Equal(Enumerable.Range(10, 10), ages);
        Assert.Equal(3, segments);

        Assert.Single((await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>().Where(
            TableQuery.GenerateFilterCondition("Name", QueryComparisons.Equal, "n'7")), null)).Results);
        Assert.Equal(new[] { 4 }, (await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>().Where(
            TableQuery.GenerateFilterConditionForDate("Joined", QueryComparisons.Equal, new DateTimeOffset(Joined.AddDays(4)))), null)).Results.Select(c => c.Age));
        Assert.Equal(new[] { 5 }, (await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>().Where(
            TableQuery.GenerateFilterConditionForGuid("Id", QueryComparisons.Equal, new Guid(5, 1, 2, new byte[8]))), null)).Results.Select(c => c.Age));
        Assert.Equal(new[] { 6 }, (await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>().Where(
            TableQuery.GenerateFilterConditionForBinary("Avatar", QueryComparisons.Equal, new byte[] { 1, 6 })), null)).Results.Select(c => c.Age));
        Assert.Equal(20, (await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>().Where(
            TableQuery.GenerateFilterConditionForBool("Active", QueryComparisons.Equal, true)), null)).Results.Count);
        Assert.Equal(new[] { 39 }, (await table.ExecuteQuerySegmentedAsync(new TableQuery<Customer>().Where(
            TableQuery.GenerateFilterConditionForDouble("Score", QueryComparisons.GreaterThan, 38.5)), null)).Results.Select(c => c.Age));

        // EntityResolver with a projection.
        EntityResolver<string> resolver = (pk, rk, ts, props, etag) => $"{rk}:{props["Age"].Int32Value}:{props.ContainsKey("Name")}";
        var projected = new TableQuery<DynamicTableEntity>().Select(new[] { "Age" }).Where(
            TableQuery.GenerateFilterConditionForInt("Age", QueryComparisons.LessThan, 2));
        var resolved = await table.ExecuteQuerySegmentedAsync(projected, resolver, null);
        Assert.Equal(new[] { "000:0:False", "001:1:False" }, resolved.Results);
    }

    [Fact]
    public async Task Sas_TablePolicy_KeyRange_And_StoredPolicy()
    {
        var table = await NewTable();
        foreach (var pk in new[] { "a", "m", "z" }) await table.ExecuteAsync(TableOperation.Insert(Sample(pk, "1", 1)));
        var sas = table.GetSharedAccessSignature(new SharedAccessTablePolicy
        {
            Permissions = SharedAccessTablePermissions.Query | SharedAccessTablePermissions.Add,
            SharedAccessExpiryTime = DateTimeOffset.UtcNow.AddHours(1),
        }, null, "b", null, "n", null);
        var limited = SasTable(table.Uri, sas);
        Assert.Equal(200, (await limited.ExecuteAsync(TableOperation.Retrieve("m", "1"))).HttpStatusCode);
        var denied = await Assert.ThrowsAsync<StorageException>(() => limited.ExecuteAsync(TableOperation.Retrieve("a", "1")));
        Assert.Equal(403, denied.RequestInformation.HttpStatusCode);
        await limited.ExecuteAsync(TableOperation.Insert(Sample("c", "1", 1)));
        var noDelete = await Assert.ThrowsAsync<StorageException>(() => limited.ExecuteAsync(TableOperation.Delete(new DynamicTableEntity("c", "1") { ETag = "*" })));
        Assert.Equal(403, noDelete.RequestInformation.HttpStatusCode);

        var perms = new TablePermissions();
        perms.SharedAccessPolicies.Add("q", new SharedAccessTablePolicy
        {
            Permissions = SharedAccessTablePermissions.Query,
            SharedAccessStartTime = DateTimeOffset.UtcNow.AddMinutes(-5),
            SharedAccessExpiryTime = DateTimeOffset.UtcNow.AddHours(1),
        });
        await table.SetPermissionsAsync(perms);
        var back = await table.GetPermissionsAsync();
        Assert.Equal(SharedAccessTablePermissions.Query, back.SharedAccessPolicies["q"].Permissions);
        var viaPolicy = SasTable(table.Uri, table.GetSharedAccessSignature(null, "q"));
        Assert.Equal(4, (await viaPolicy.ExecuteQuerySegmentedAsync(new TableQuery(), null)).Results.Count);
    }
}
