using Azure;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

[Collection("server")]
public class TransactionTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;

    [Fact]
    public void EveryActionType_InOneChangeset()
    {
        var table = Clients.NewTable(_s);
        table.AddEntity(new TableEntity("p", "del"));
        table.AddEntity(new TableEntity("p", "merge") { ["a"] = 1, ["b"] = 1 });
        table.AddEntity(new TableEntity("p", "replace") { ["a"] = 1, ["b"] = 1 });
        table.AddEntity(new TableEntity("p", "umerge") { ["a"] = 1 });
        var etag = table.GetEntity<TableEntity>("p", "replace").Value.ETag;

        var response = table.SubmitTransaction(new[]
        {
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "add") { ["x"] = 1 }),
            new TableTransactionAction(TableTransactionActionType.Delete, new TableEntity("p", "del")),
            new TableTransactionAction(TableTransactionActionType.UpdateMerge, new TableEntity("p", "merge") { ["b"] = 2 }),
            new TableTransactionAction(TableTransactionActionType.UpdateReplace, new TableEntity("p", "replace") { ["c"] = 3 }, etag),
            new TableTransactionAction(TableTransactionActionType.UpsertMerge, new TableEntity("p", "umerge") { ["b"] = 5 }),
            new TableTransactionAction(TableTransactionActionType.UpsertReplace, new TableEntity("p", "ureplace") { ["d"] = 6 }),
        });
        Assert.Equal(6, response.Value.Count);
        // The SDK sends Prefer: return-no-content with an Add, so every part is 204.
        Assert.Equal(new[] { 204, 204, 204, 204, 204, 204 }, response.Value.Select(r => r.Status));
        // Every part but the delete carries the row's new ETag.
        Assert.All(response.Value.Where((_, i) => i != 1), r => Assert.False(string.IsNullOrEmpty(r.Headers.ETag?.ToString())));
        Assert.Null(response.Value[1].Headers.ETag);

        var rows = table.Query<TableEntity>().ToDictionary(e => e.RowKey);
        Assert.Equal(new[] { "add", "merge", "replace", "umerge", "ureplace" }, rows.Keys.OrderBy(k => k, StringComparer.Ordinal));
        Assert.Equal((1, 2), (rows["merge"].GetInt32("a")!.Value, rows["merge"].GetInt32("b")!.Value));
        Assert.False(rows["replace"].ContainsKey("a"));
        Assert.Equal(3, rows["replace"].GetInt32("c"));
        Assert.Equal((1, 5), (rows["umerge"].GetInt32("a")!.Value, rows["umerge"].GetInt32("b")!.Value));
        Assert.Equal(6, rows["ureplace"].GetInt32("d"));
    }

    [Fact]
    public void FailingAction_IsReported_ByIndex_AndNothingCommits()
    {
        var table = Clients.NewTable(_s);
        table.AddEntity(new TableEntity("p", "exists"));
        var e = Assert.Throws<TableTransactionFailedException>(() => table.SubmitTransaction(new[]
        {
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "a")),
            new TableTransactionAction(TableTransactionActionType.UpsertMerge, new TableEntity("p", "b")),
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "exists")),
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", "c")),
        }));
        Assert.Equal(2, e.FailedTransactionActionIndex);
        Assert.Equal(409, e.Status);
        Assert.Equal("EntityAlreadyExists", e.ErrorCode);
        Assert.Equal(new[] { "exists" }, table.Query<TableEntity>().Select(x => x.RowKey));

        // A stale ETag fails with 412 at its index.
        var stale = table.GetEntity<TableEntity>("p", "exists").Value.ETag;
        table.UpdateEntity(new TableEntity("p", "exists") { ["v"] = 1 }, ETag.All);
        var e2 = Assert.Throws<TableTransactionFailedException>(() => table.SubmitTransaction(new[]
        {
            new TableTransactionAction(TableTransactionActionType.UpdateReplace, new TableEntity("p", "exists"), stale),
        }));
        Assert.Equal(0, e2.FailedTransactionActionIndex);
        Assert.Equal(412, e2.Status);
        Assert.Equal("UpdateConditionNotSatisfied", e2.ErrorCode);
    }

    [Fact]
    public void Hundred_Actions_Commit_And_HundredOne_Fail()
    {
        var table = Clients.NewTable(_s);
        var hundred = Enumerable.Range(0, 100).Select(i =>
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p", $"{i:D3}") { ["i"] = i })).ToList();
        Assert.Equal(100, table.SubmitTransaction(hundred).Value.Count);
        Assert.Equal(100, table.Query<TableEntity>(select: new[] { "i" }).Count());

        var hundredOne = Enumerable.Range(0, 101).Select(i =>
            new TableTransactionAction(TableTransactionActionType.UpsertReplace, new TableEntity("q", $"{i:D3}"))).ToList();
        var e = Assert.ThrowsAny<RequestFailedException>(() => table.SubmitTransaction(hundredOne));
        Assert.Equal(400, e.Status);
        Assert.Equal("InvalidInput", e.ErrorCode);
        Assert.Empty(table.Query<TableEntity>("PartitionKey eq 'q'"));
    }

    [Fact]
    public void TwoPartitions_InOneChangeset_Is400()
    {
        var table = Clients.NewTable(_s);
        var e = Assert.ThrowsAny<RequestFailedException>(() => table.SubmitTransaction(new[]
        {
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p1", "a")),
            new TableTransactionAction(TableTransactionActionType.Add, new TableEntity("p2", "a")),
        }));
        Assert.Equal(400, e.Status);
        Assert.Equal("CommandsInBatchActOnDifferentPartitions", e.ErrorCode);
    }

    /// <summary>A changeset over the service's 4 MiB request limit gets 413 RequestBodyTooLarge.
    /// The server answers before it has read the body; until its connection lingers after that
    /// early answer (the transport fix, not yet on main), a client still sending may see the reset
    /// instead of the 413: if this test fails with a transport error, that is the cause.</summary>
    [Fact]
    public void Transaction_Over4MiB_Is413()
    {
        var table = Clients.NewTable(_s, Clients.Options(0));
        var big = new string('x', 30000);
        var actions = Enumerable.Range(0, 100).Select(i => new TableTransactionAction(TableTransactionActionType.UpsertReplace,
            new TableEntity("p", $"{i:D3}") { ["a"] = big, ["b"] = big })).ToList();  // ~6 MB of JSON
        var e = Assert.ThrowsAny<RequestFailedException>(() => table.SubmitTransaction(actions));
        Assert.True(e.Status == 413, "KNOWN FAILURE on main until the lingering-close fix (transport) lands: expected 413, got "
            + $"status {e.Status} (0: the connection was reset under the client before it read the early answer): {e.Message}");
        Assert.Equal("RequestBodyTooLarge", e.ErrorCode);
        Assert.Empty(table.Query<TableEntity>());
    }
}
