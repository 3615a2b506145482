// The Cosmos DB for Table flavour through Azure.Data.Tables (issue 38, docs/cosmos-mode.md).
//
// One tablestone serves both flavours: the main listener is the storage flavour (devstoreaccount1 on
// 127.0.0.1), the --cosmosPort listener the Cosmos flavour in the shape of the Windows emulator's
// Table endpoint (account "localhost", the emulator's key, TableEndpoint=http://localhost:<port>/),
// which the SDK treats as a Cosmos DB endpoint (TableServiceClient.IsPremiumEndpoint: localhost on a
// port other than 10002). Each documented difference is checked on the Cosmos listener and, where
// storage answers otherwise, on the storage listener. The RU budget has a server of its own.
//
// These tests address their servers themselves, so scripts/test.sh runs them in one of its two
// shapes only (the localhost one).
using System.Diagnostics;
using System.Net;
using System.Text;
using System.Text.Json;
using Azure;
using Azure.Core;
using Azure.Core.Pipeline;
using Azure.Data.Tables;
using Azure.Data.Tables.Models;
using Azure.Data.Tables.Sas;
using Xunit;

namespace Tablestone.E2E.Tables;

public sealed class CosmosServersFixture : IDisposable
{
    public const string EmulatorAccount = "localhost";
    public const string EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    private readonly string _tmp = Directory.CreateTempSubdirectory("tablestone-e2e-dotnet-cosmos.").FullName;
    public string TracePath { get; }
    public int CosmosPort { get; } = TablestoneServer.FreePort();
    public int RuPort { get; } = TablestoneServer.FreePort();
    public TablestoneServer Server { get; }
    public TablestoneServer RuServer { get; }

    public CosmosServersFixture()
    {
        TracePath = Path.Combine(_tmp, "trace.jsonl");
        Server = new TablestoneServer(new[] { "--cosmosPort", CosmosPort.ToString(), "--trace", TracePath, "--traceBodies" },
                                      host: "127.0.0.1");
        RuServer = new TablestoneServer(new[] { "--cosmosPort", RuPort.ToString(), "--cosmosRuPerSecond", "10" }, host: "127.0.0.1");
    }

    public static string CosmosConnectionString(int port) =>
        $"DefaultEndpointsProtocol=http;AccountName={EmulatorAccount};AccountKey={EmulatorKey};TableEndpoint=http://localhost:{port}/;";

    public string CosmosCs => CosmosConnectionString(CosmosPort);

    public void Dispose()
    {
        Server.Dispose();
        RuServer.Dispose();
        try { Directory.Delete(_tmp, recursive: true); } catch (IOException) { }
    }
}

[Trait("Flavour", "Cosmos")]
public class CosmosTests(CosmosServersFixture fx) : IClassFixture<CosmosServersFixture>
{
    private TableServiceClient Cosmos(TableClientOptions? o = null) => new(fx.CosmosCs, o ?? Clients.Options());
    private TableServiceClient Storage() => Clients.Service(fx.Server);

    private (TableClient Cosmos, TableClient Storage) NewTables(string prefix = "cos")
    {
        var name = Names.Unique(prefix);
        Cosmos().CreateTable(name);
        Storage().CreateTable(name);
        return (Cosmos().GetTableClient(name), Storage().GetTableClient(name));
    }

    private static void Fill(TableClient t, IEnumerable<string> rowKeys, Func<string, TableEntity>? make = null)
    {
        foreach (var chunk in rowKeys.Chunk(100))
            t.SubmitTransaction(chunk.Select(rk => new TableTransactionAction(TableTransactionActionType.Add, make?.Invoke(rk) ?? new TableEntity("p", rk))));
    }

    private static List<string> Keys(int n) => Enumerable.Range(0, n).Select(i => i.ToString("D3")).ToList();

    /// <summary>Cosmos DB names the error in the body only: no x-ms-error-code header.</summary>
    private static void CosmosError(RequestFailedException e, int status, string? code = null)
    {
        Assert.Equal(status, e.Status);
        if (code != null) Assert.Equal(code, e.ErrorCode);
        var raw = e.GetRawResponse();
        Assert.NotNull(raw);
        Assert.False(raw!.Headers.Contains("x-ms-error-code"), "x-ms-error-code on a Cosmos DB answer");
    }

    [Fact]
    public void ResultsAreNotInKeyOrder_PagingIsComplete_TokensAreOpaque()
    {
        var (c, s) = NewTables();
        var keys = Keys(40);
        Fill(c, keys);
        Fill(s, keys);
        Assert.Equal(keys, s.Query<TableEntity>().Select(e => e.RowKey).ToList());
        var order = c.Query<TableEntity>().Select(e => e.RowKey).ToList();
        Assert.Equal(keys, order.OrderBy(k => k, StringComparer.Ordinal).ToList());
        Assert.NotEqual(keys, order);
        Assert.Equal(order, c.Query<TableEntity>().Select(e => e.RowKey).ToList()); // same seed, same order

        var paged = new List<string>();
        string? token = null;
        foreach (var page in c.Query<TableEntity>(maxPerPage: 7).AsPages())
        {
            paged.AddRange(page.Values.Select(e => e.RowKey));
            token ??= page.ContinuationToken;
        }
        Assert.Equal(keys, paged.OrderBy(k => k, StringComparer.Ordinal).ToList());
        // The SDK's token joins NextPartitionKey and NextRowKey: a Cosmos token and "NA", not keys.
        Assert.NotNull(token);
        Assert.Contains("\"token\"", token);
        Assert.EndsWith("NA", token);
    }

    [Fact]
    public void QueryTables_IsNotInNameOrder()
    {
        var prefix = Names.Unique("lst");
        var names = Enumerable.Range(0, 10).Select(i => $"{prefix}x{i}").ToList();
        foreach (var n in names) { Cosmos().CreateTable(n); Storage().CreateTable(n); }
        var filter = TableClient.CreateQueryFilter($"TableName ge {prefix} and TableName lt {prefix + "~"}");
        Assert.Equal(names, Storage().Query(filter).Select(t => t.Name).ToList());
        var got = Cosmos().Query(filter).Select(t => t.Name).ToList();
        Assert.Equal(names, got.OrderBy(n => n, StringComparer.Ordinal).ToList());
        Assert.NotEqual(names, got);
    }

    [Fact]
    public void RowKey_AtMost255Utf8Bytes()
    {
        var (c, s) = NewTables();
        c.AddEntity(new TableEntity("p", new string('r', 255)));
        c.AddEntity(new TableEntity("p", new string('é', 127))); // 254 bytes
        foreach (var rk in new[] { new string('r', 256), new string('é', 128) /* 128 characters, 256 bytes */ })
        {
            CosmosError(Assert.ThrowsAny<RequestFailedException>(() => c.AddEntity(new TableEntity("p", rk))), 400, "KeyValueTooLarge");
            s.AddEntity(new TableEntity("p", rk));
        }
    }

    [Fact]
    public void Batch_Over2MiB_Is413_OnCosmos_AndAcceptedByStorage()
    {
        var (c, s) = NewTables();
        var big = new string('x', 30000);
        var actions = Enumerable.Range(0, 80)
            .Select(i => new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", $"r{i}") { ["Big"] = big }))
            .ToList(); // about 2.4 MB of JSON
        var e = Assert.ThrowsAny<RequestFailedException>(() => c.SubmitTransaction(actions));
        Assert.Equal(413, e.Status);
        Assert.Empty(c.Query<TableEntity>().ToList());
        Assert.Equal(80, s.SubmitTransaction(actions).Value.Count);
    }

    [Fact]
    public void TableNames_AreCaseSensitive()
    {
        var upper = Names.Unique("Case");
        var lower = upper.ToLowerInvariant();
        Cosmos().CreateTable(upper);
        Cosmos().CreateTable(lower);
        Cosmos().GetTableClient(upper).AddEntity(new TableEntity("p", "only-in-upper"));
        CosmosError(Assert.ThrowsAny<RequestFailedException>(() => Cosmos().GetTableClient(lower).GetEntity<TableEntity>("p", "only-in-upper")),
                    404, "ResourceNotFound");
        var filter = TableClient.CreateQueryFilter($"TableName eq {upper} or TableName eq {lower}");
        Assert.Equal(2, Cosmos().Query(filter).Count());

        Storage().CreateTable(upper);
        var e = Assert.Throws<RequestFailedException>(() => Storage().CreateTable(lower));
        Assert.Equal(409, e.Status);
        Storage().GetTableClient(upper).AddEntity(new TableEntity("p", "both"));
        Assert.Equal("both", Storage().GetTableClient(lower).GetEntity<TableEntity>("p", "both").Value.RowKey);
    }

    [Fact]
    public void ReservedPropertyNames_AreRefused()
    {
        var (c, s) = NewTables();
        foreach (var name in new[] { "id", "rid", "etag", "ResourceId" })
        {
            CosmosError(Assert.ThrowsAny<RequestFailedException>(() => c.AddEntity(new TableEntity("p", name) { [name] = "v" })), 400);
            s.AddEntity(new TableEntity("p", name) { [name] = "v" });
        }
        var batch = new[]
        {
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "a")),
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "b") { ["id"] = "v" }),
        };
        var e = Assert.ThrowsAny<RequestFailedException>(() => c.SubmitTransaction(batch));
        Assert.Equal(400, e.Status);
        Assert.Empty(c.Query<TableEntity>().ToList());
    }

    [Fact]
    public void Top_Above1000_IsOnePageOnCosmos_And400OnStorage()
    {
        var (c, s) = NewTables();
        Fill(c, Enumerable.Range(0, 1200).Select(i => i.ToString("D4")));
        var first = c.Query<TableEntity>(maxPerPage: 1200, select: new[] { "RowKey" }).AsPages().First();
        Assert.Equal(1200, first.Values.Count);
        Assert.Null(first.ContinuationToken);
        var e = Assert.ThrowsAny<RequestFailedException>(() => s.Query<TableEntity>(maxPerPage: 1200).AsPages().First());
        Assert.Equal(400, e.Status);
    }

    [Fact]
    public void UnsupportedOperations_Answer501NotImplemented()
    {
        var name = Names.Unique();
        Cosmos().CreateTable(name);
        var table = Cosmos().GetTableClient(name);
        var calls = new Dictionary<string, Action>
        {
            ["GetProperties"] = () => Cosmos().GetProperties(),
            ["SetProperties"] = () => Cosmos().SetProperties(new TableServiceProperties()),
            ["GetAccessPolicies"] = () => table.GetAccessPolicies(),
            ["SetAccessPolicy"] = () => table.SetAccessPolicy(Array.Empty<TableSignedIdentifier>()),
        };
        foreach (var (what, call) in calls)
        {
            var e = Assert.ThrowsAny<RequestFailedException>(call);
            Assert.True(e.Status == 501, $"{what}: {e.Status} {e.Message}");
            Assert.True(e.ErrorCode == "NotImplemented", $"{what}: {e.ErrorCode}");
        }
        Assert.NotNull(Storage().GetProperties().Value);
        // Statistics are read from the account's secondary endpoint, which the SDK names after the host's
        // first label: on the emulator's endpoint that is "localhost-secondary", so the call never reaches
        // a server (as against the Windows emulator).
        var stats = Assert.ThrowsAny<Exception>(() => Cosmos().GetStatistics());
        Assert.Contains("localhost-secondary", stats.ToString());
    }

    [Fact]
    public void Errors_NameTheirCodeInTheBodyOnly()
    {
        var name = Names.Unique();
        Cosmos().CreateTable(name);
        var e = Assert.ThrowsAny<RequestFailedException>(() => Cosmos().GetTableClient(name).GetEntity<TableEntity>("p", "missing"));
        CosmosError(e, 404, "ResourceNotFound");
    }

    private sealed class AttemptRecorder : HttpPipelineSynchronousPolicy
    {
        public readonly List<(long AtMs, int Status, string? RetryAfterMs)> Attempts = new();
        private readonly Stopwatch _clock = Stopwatch.StartNew();
        public override void OnReceivedResponse(HttpMessage message)
        {
            message.Response.Headers.TryGetValue("x-ms-retry-after-ms", out var h);
            lock (Attempts) Attempts.Add((_clock.ElapsedMilliseconds, message.Response.Status, h));
        }
    }

    [Fact]
    public void RuBudget_429_IsRetriedByAzureCore_AfterXMsRetryAfterMs()
    {
        var cs = CosmosServersFixture.CosmosConnectionString(fx.RuPort);
        var name = Names.Unique("ru");
        new TableServiceClient(cs, Clients.Options()).CreateTable(name);
        var recorder = new AttemptRecorder();
        var o = new TableClientOptions();
        o.Retry.MaxRetries = 5;
        o.Retry.Delay = TimeSpan.FromMilliseconds(1); // the server's delay must be what makes it wait
        o.AddPolicy(recorder, HttpPipelinePosition.PerRetry);
        var table = new TableClient(cs, name, o);
        for (var i = 0; i < 6; i++) table.AddEntity(new TableEntity("p", $"r{i}"));
        Assert.Equal(6, table.Query<TableEntity>().Count());

        var a = recorder.Attempts;
        var throttled = Enumerable.Range(0, a.Count).Where(i => a[i].Status == 429).ToList();
        Assert.True(throttled.Count > 0, "no 429 among " + string.Join(",", a.Select(x => x.Status)));
        foreach (var i in throttled)
        {
            Assert.True(int.TryParse(a[i].RetryAfterMs, out var wait) && wait >= 1, $"x-ms-retry-after-ms: {a[i].RetryAfterMs}");
            Assert.True(i + 1 < a.Count, "the 429 was not retried");
            Assert.True(a[i + 1].AtMs - a[i].AtMs >= wait - 5, $"retried after {a[i + 1].AtMs - a[i].AtMs} ms, header said {wait}");
        }

        var noRetry = new TableClient(cs, name, Clients.Options(0));
        RequestFailedException? err = null;
        for (var i = 0; i < 20 && err == null; i++)
        {
            try { noRetry.AddEntity(new TableEntity("q", $"r{i}")); }
            catch (RequestFailedException e) { err = e; }
        }
        Assert.NotNull(err);
        CosmosError(err!, 429);
        Assert.True(err!.GetRawResponse()!.Headers.TryGetValue("x-ms-retry-after-ms", out var ms) && int.Parse(ms!) >= 1);
    }

    /// <summary>The trace lines matching `pred` once at least `atLeast` of them are in the file (the server's
    /// writer thread appends them after the answers, every 10 ms on a quiet machine); what is there after 10 s
    /// otherwise.</summary>
    private List<JsonElement> TraceLines(Func<JsonElement, bool> pred, int atLeast = 1)
    {
        var found = new List<JsonElement>();
        for (var i = 0; i < 200; i++)
        {
            using var fs = new FileStream(fx.TracePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            using var reader = new StreamReader(fs, Encoding.UTF8);
            // The writer may be mid-line (a traced body is up to 64 KiB and reaches the file in more than one
            // write): only lines with their newline are whole.
            var text = reader.ReadToEnd();
            found = text[..(text.LastIndexOf('\n') + 1)].Split('\n', StringSplitOptions.RemoveEmptyEntries)
                .Select(l => JsonDocument.Parse(l).RootElement.Clone()).Where(pred).ToList();
            if (found.Count >= atLeast) return found;
            Thread.Sleep(50);
        }
        return found;
    }

    private static string? Str(JsonElement l, string field) =>
        l.TryGetProperty(field, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;

    private static string? RequestHeader(JsonElement l, string name)
    {
        if (!l.TryGetProperty("requestHeaders", out var h) || h.ValueKind != JsonValueKind.Object) return null;
        foreach (var p in h.EnumerateObject())
            if (string.Equals(p.Name, name, StringComparison.OrdinalIgnoreCase)) return p.Value.GetString();
        return null;
    }

    /// <summary>What the SDK's Cosmos path sends for a merge: Azure.Data.Tables 12.13.0 builds merges as
    /// PATCH and its CosmosPatchTransformPolicy sends them as POST with X-HTTP-Method: MERGE, inside a
    /// transaction too.</summary>
    [Fact]
    public void Merge_ThroughTheCosmosPath()
    {
        var name = Names.Unique("mrg");
        Cosmos().CreateTable(name);
        var table = Cosmos().GetTableClient(name);
        table.AddEntity(new TableEntity("p", "1") { ["A"] = 1 });
        table.UpdateEntity(new TableEntity("p", "1") { ["B"] = 2 }, ETag.All, TableUpdateMode.Merge);
        table.UpsertEntity(new TableEntity("p", "1") { ["C"] = 3 }, TableUpdateMode.Merge);
        table.SubmitTransaction(new[] { new TableTransactionAction(TableTransactionActionType.UpdateMerge, new TableEntity("p", "1") { ["D"] = 4 }) });
        var e = table.GetEntity<TableEntity>("p", "1").Value;
        Assert.Equal(new int?[] { 1, 2, 3, 4 }, new[] { e.GetInt32("A"), e.GetInt32("B"), e.GetInt32("C"), e.GetInt32("D") });

        var merges = TraceLines(l => Str(l, "table") == name && Str(l, "operation") is "MergeEntity" or "InsertOrMergeEntity", atLeast: 2);
        Assert.Equal(new[] { "InsertOrMergeEntity", "MergeEntity" }, merges.Select(l => Str(l, "operation")).Order().ToArray());
        foreach (var l in merges)
            Assert.True(Str(l, "method") == "POST" && RequestHeader(l, "X-HTTP-Method") == "MERGE", l.ToString());
        var batch = TraceLines(l => Str(l, "operation") == "EntityGroupTransaction" && (Str(l, "requestBody") ?? "").Contains(name)).Single();
        var body = Str(batch, "requestBody")!;
        Assert.Contains($"POST http://localhost:{fx.CosmosPort}/{name}(PartitionKey='p',RowKey='1')", body);
        Assert.Contains("X-HTTP-Method: MERGE", body, StringComparison.OrdinalIgnoreCase);
    }
    /// <summary>Cosmos DB's table-name rule (1-254 characters, none of / \ # ?, no trailing space):
    /// names storage refuses are tables; the ones Cosmos DB refuses are 400 in a body and in a URL.</summary>
    [Fact]
    public void TableNames_FollowTheCosmosRule()
    {
        foreach (var name in new[] { "my-" + Names.Unique("n"), "x." + Names.Unique("n"), "9" + Names.Unique("n") })
        {
            Cosmos().CreateTable(name);
            var t = Cosmos().GetTableClient(name);
            t.AddEntity(new TableEntity("p", "1") { ["V"] = 1 });
            t.SubmitTransaction(new[] { new TableTransactionAction(TableTransactionActionType.UpsertMerge, new TableEntity("p", "2")) });
            Assert.Equal(1, t.GetEntity<TableEntity>("p", "1").Value.GetInt32("V"));
            Assert.Equal(2, t.Query<TableEntity>().Count());
            Cosmos().DeleteTable(name);
            var refused = Assert.ThrowsAny<RequestFailedException>(() => Storage().CreateTable(name));
            Assert.Equal((400, "InvalidResourceName"), (refused.Status, refused.ErrorCode));
        }
        foreach (var bad in new[] { "bad#name", "bad?name", "bad\\name", "trailing " })
        {
            CosmosError(Assert.ThrowsAny<RequestFailedException>(() => Cosmos().CreateTable(bad)), 400, "InvalidInput");
            CosmosError(Assert.ThrowsAny<RequestFailedException>(() => Cosmos().GetTableClient(bad).AddEntity(new TableEntity("p", "r"))),
                        400, "InvalidInput");
        }
        CosmosError(Assert.ThrowsAny<RequestFailedException>(() => Cosmos().CreateTable(new string('t', 255))), 400, "BadRequest");
    }

    /// <summary>A SAS may not create or delete tables on Cosmos DB (it may on storage), and a stored
    /// access policy never resolves.</summary>
    [Fact]
    public void Sas_CannotManageTables_NorNameAStoredPolicy()
    {
        var name = Names.Unique("sas");
        Cosmos().CreateTable(name);
        var sas = Cosmos().GenerateSasUri(TableAccountSasPermissions.All, TableAccountSasResourceTypes.All, DateTimeOffset.UtcNow.AddHours(1));
        var bySas = new TableServiceClient(sas, Clients.Options());
        CosmosError(Assert.ThrowsAny<RequestFailedException>(() => bySas.CreateTable(Names.Unique("sas"))), 403, "AuthorizationPermissionMismatch");
        CosmosError(Assert.ThrowsAny<RequestFailedException>(() => bySas.DeleteTable(name)), 403, "AuthorizationPermissionMismatch");
        bySas.GetTableClient(name).AddEntity(new TableEntity("p", "r"));
        Assert.Single(bySas.GetTableClient(name).Query<TableEntity>());

        var storageSas = Storage().GenerateSasUri(TableAccountSasPermissions.All, TableAccountSasResourceTypes.All, DateTimeOffset.UtcNow.AddHours(1));
        var storageBySas = new TableServiceClient(storageSas, Clients.Options());
        var created = Names.Unique("sas");
        storageBySas.CreateTable(created);
        storageBySas.DeleteTable(created);

        var withPolicy = Cosmos().GetTableClient(name).GenerateSasUri(new TableSasBuilder(name, TableSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1)) { Identifier = "readers" });
        var byPolicy = new TableServiceClient(new Uri($"http://localhost:{fx.CosmosPort}/{withPolicy.Query}"), Clients.Options())
            .GetTableClient(name);
        CosmosError(Assert.ThrowsAny<RequestFailedException>(() => byPolicy.Query<TableEntity>().ToList()), 403, "AuthenticationFailed");
    }

    /// <summary>Error messages end as recorded from Cosmos DB: a RequestID line, no Time line; a
    /// transaction's failure keeps its operation's index.</summary>
    [Fact]
    public void Errors_EndWithARequestIdLine()
    {
        var name = Names.Unique();
        Cosmos().CreateTable(name);
        var table = Cosmos().GetTableClient(name);
        var e = Assert.ThrowsAny<RequestFailedException>(() => table.GetEntity<TableEntity>("p", "missing"));
        var raw = e.GetRawResponse()!;
        using var body = JsonDocument.Parse(raw.Content.ToString());
        var message = body.RootElement.GetProperty("odata.error").GetProperty("message");
        Assert.Equal($"The specified resource does not exist.\nRequestID:{raw.Headers.RequestId}\n", message.GetProperty("value").GetString());
        Assert.Equal("en-us", message.GetProperty("lang").GetString());
        table.AddEntity(new TableEntity("p", "2"));
        var failed = Assert.Throws<TableTransactionFailedException>(() => table.SubmitTransaction(new[] {
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "1")),
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "2")) }));
        Assert.Equal(1, failed.FailedTransactionActionIndex);
        Assert.Contains("1:The specified entity already exists.\n\nRequestID:", failed.Message);
        Assert.DoesNotContain("Time:", failed.Message);
    }
}
