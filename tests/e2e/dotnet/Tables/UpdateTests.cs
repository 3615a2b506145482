using Azure;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

[Collection("server")]
public class UpdateTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;

    [Fact]
    public void Merge_And_Replace_WithETags()
    {
        var table = Clients.NewTable(_s);
        var etag1 = table.AddEntity(new TableEntity("p", "r") { ["a"] = 1, ["b"] = "keep" }).Headers.ETag!.Value;

        var etag2 = table.UpdateEntity(new TableEntity("p", "r") { ["a"] = 2 }, etag1, TableUpdateMode.Merge).Headers.ETag!.Value;
        Assert.NotEqual(etag1, etag2);
        var merged = table.GetEntity<TableEntity>("p", "r").Value;
        Assert.Equal(2, merged.GetInt32("a"));
        Assert.Equal("keep", merged.GetString("b"));
        Assert.Equal(etag2, merged.ETag);

        // The old ETag no longer matches: 412 UpdateConditionNotSatisfied, for both modes and delete.
        foreach (var mode in new[] { TableUpdateMode.Merge, TableUpdateMode.Replace })
        {
            var e = Assert.Throws<RequestFailedException>(() => table.UpdateEntity(new TableEntity("p", "r") { ["a"] = 9 }, etag1, mode));
            Assert.Equal(412, e.Status);
            Assert.Equal("UpdateConditionNotSatisfied", e.ErrorCode);
        }
        var d = Assert.Throws<RequestFailedException>(() => table.DeleteEntity("p", "r", etag1));
        Assert.Equal(412, d.Status);
        Assert.Equal("UpdateConditionNotSatisfied", d.ErrorCode);

        table.UpdateEntity(new TableEntity("p", "r") { ["c"] = true }, etag2, TableUpdateMode.Replace);
        var replaced = table.GetEntity<TableEntity>("p", "r").Value;
        Assert.False(replaced.ContainsKey("a"));
        Assert.False(replaced.ContainsKey("b"));
        Assert.True(replaced.GetBoolean("c"));

        // ETag.All: unconditional.
        table.UpdateEntity(new TableEntity("p", "r") { ["d"] = 4 }, ETag.All, TableUpdateMode.Merge);
        Assert.Equal(4, table.GetEntity<TableEntity>("p", "r").Value.GetInt32("d"));
        table.DeleteEntity("p", "r", ETag.All);
        Assert.False(table.GetEntityIfExists<TableEntity>("p", "r").HasValue);
    }

    [Fact]
    public void Update_OfMissingEntity_Is404()
    {
        var table = Clients.NewTable(_s);
        var e = Assert.Throws<RequestFailedException>(() => table.UpdateEntity(new TableEntity("x", "y"), ETag.All, TableUpdateMode.Merge));
        Assert.Equal(404, e.Status);
        Assert.Equal("ResourceNotFound", e.ErrorCode);
        table.DeleteEntity("x", "y");  // the SDK treats 404 on delete as done
    }

    [Fact]
    public void Upsert_Merge_And_Replace()
    {
        var table = Clients.NewTable(_s);
        table.UpsertEntity(new TableEntity("p", "r") { ["a"] = 1, ["b"] = 2 }, TableUpdateMode.Merge);  // inserts
        table.UpsertEntity(new TableEntity("p", "r") { ["b"] = 3, ["c"] = 4 }, TableUpdateMode.Merge);
        var merged = table.GetEntity<TableEntity>("p", "r").Value;
        Assert.Equal((1, 3, 4), (merged.GetInt32("a")!.Value, merged.GetInt32("b")!.Value, merged.GetInt32("c")!.Value));
        table.UpsertEntity(new TableEntity("p", "r") { ["z"] = "only" }, TableUpdateMode.Replace);
        var replaced = table.GetEntity<TableEntity>("p", "r").Value;
        Assert.Equal(new[] { "z" }, replaced.Keys.Where(k => k is not ("PartitionKey" or "RowKey" or "Timestamp" or "odata.etag")));
    }

    [Fact]
    public void ConcurrentWriters_SecondGets412()
    {
        var table = Clients.NewTable(_s);
        table.AddEntity(new TableEntity("p", "r") { ["n"] = 0 });
        var a = table.GetEntity<TableEntity>("p", "r").Value;
        var b = table.GetEntity<TableEntity>("p", "r").Value;
        a["n"] = 1;
        table.UpdateEntity(a, a.ETag, TableUpdateMode.Replace);
        b["n"] = 2;
        var e = Assert.Throws<RequestFailedException>(() => table.UpdateEntity(b, b.ETag, TableUpdateMode.Replace));
        Assert.Equal(412, e.Status);
        Assert.Equal(1, table.GetEntity<TableEntity>("p", "r").Value.GetInt32("n"));
    }
}
