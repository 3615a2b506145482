using System.Net;
using System.Text.Json;
using Azure;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

/// <summary>TableClientOptions.Retry against the server's fault rules (docs/testing-with-faults.md):
/// a server of its own with --adminApi and a fixed seed; each test's rules match only its own table.</summary>
public sealed class FaultServerFixture : IDisposable
{
    public TablestoneServer Server { get; } = new(new[] { "--adminApi", "--faultSeed", "1" });
    public void Dispose() => Server.Dispose();
}

public class RetryTests(FaultServerFixture fx) : IClassFixture<FaultServerFixture>
{
    private readonly TablestoneServer _s = fx.Server;

    private async Task<string> AddRule(object rule)
    {
        var (status, body) = await _s.AdminAsync(HttpMethod.Post, "faults", JsonSerializer.Serialize(rule));
        Assert.Equal(HttpStatusCode.Created, status);
        return JsonDocument.Parse(body).RootElement.GetProperty("ids")[0].GetString()!;
    }

    private async Task<(int Matched, int Injected)> Counters(string id)
    {
        var (status, body) = await _s.AdminAsync(HttpMethod.Get, "faults");
        Assert.Equal(HttpStatusCode.OK, status);
        foreach (var r in JsonDocument.Parse(body).RootElement.GetProperty("rules").EnumerateArray())
            if (r.GetProperty("id").GetString() == id) return (r.GetProperty("matched").GetInt32(), r.GetProperty("injected").GetInt32());
        throw new KeyNotFoundException(id);
    }

    [Fact]
    public async Task ServerBusy_IsRetried_UntilItPasses()
    {
        var table = Clients.NewTable(_s, Clients.Options(3));
        var id = await AddRule(new { action = "serverBusy", maxCount = 2, match = new { table = table.Name, operation = "InsertEntity" } });
        await table.AddEntityAsync(new TableEntity("p", "r"));
        Assert.Equal((3, 2), await Counters(id));
        Assert.True(table.GetEntityIfExists<TableEntity>("p", "r").HasValue);
    }

    [Fact]
    public async Task ServerBusy_BeyondMaxRetries_Surfaces503()
    {
        var table = Clients.NewTable(_s, Clients.Options(2));
        var id = await AddRule(new { action = "serverBusy", match = new { table = table.Name, operation = "QueryEntities" } });
        var e = Assert.Throws<RequestFailedException>(() => table.Query<TableEntity>().ToList());
        Assert.Equal(503, e.Status);
        Assert.Equal("ServerBusy", e.ErrorCode);
        Assert.Equal((3, 3), await Counters(id));
    }

    [Fact]
    public async Task TimeoutAfterCommit_RetryFindsTheEntity_409()
    {
        // The write committed, the answer was 500 OperationTimedOut; the retried insert meets its own row.
        var table = Clients.NewTable(_s, Clients.Options(3));
        var id = await AddRule(new { action = "timeoutAfter", maxCount = 1, match = new { table = table.Name, operation = "InsertEntity" } });
        var e = Assert.Throws<RequestFailedException>(() => table.AddEntity(new TableEntity("p", "r") { ["v"] = 1 }));
        Assert.Equal(409, e.Status);
        Assert.Equal("EntityAlreadyExists", e.ErrorCode);
        Assert.Equal((2, 1), await Counters(id));
        Assert.Equal(1, table.GetEntity<TableEntity>("p", "r").Value.GetInt32("v"));
    }

    [Fact]
    public async Task InternalErrorBeforeCommit_OnATransaction_IsRetried()
    {
        var table = Clients.NewTable(_s, Clients.Options(3));
        var id = await AddRule(new { action = "internalErrorBefore", maxCount = 1, match = new { operation = "EntityGroupTransaction" }  /* a batch names no table in its URL */ });
        var r = table.SubmitTransaction(new[] { new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "r")) });
        Assert.Single(r.Value);
        Assert.Equal((2, 1), await Counters(id));
    }

    [Fact]
    public async Task ConnectionClosedAfterCommit_UpsertIsIdempotent()
    {
        var table = Clients.NewTable(_s, Clients.Options(3));
        var id = await AddRule(new { action = "closeAfter", maxCount = 1, match = new { table = table.Name, operation = "InsertOrReplaceEntity" } });
        table.UpsertEntity(new TableEntity("p", "r") { ["v"] = 2 }, TableUpdateMode.Replace);
        Assert.Equal((2, 1), await Counters(id));
        Assert.Equal(2, table.GetEntity<TableEntity>("p", "r").Value.GetInt32("v"));
    }

    [Fact]
    public async Task ResetMidResponse_QueryPageIsRetried()
    {
        var table = Clients.NewTable(_s, Clients.Options(3));
        for (var i = 0; i < 5; i++) table.AddEntity(new TableEntity("p", $"{i}"));
        var id = await AddRule(new { action = "resetMidResponse", maxCount = 1, match = new { table = table.Name, operation = "QueryEntities" } });
        Assert.Equal(5, table.Query<TableEntity>().Count());
        Assert.Equal((2, 1), await Counters(id));
    }
}
