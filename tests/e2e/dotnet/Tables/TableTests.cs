using Azure;
using Azure.Data.Tables;
using Azure.Data.Tables.Models;
using Xunit;

namespace Tablestone.E2E.Tables;

[Collection("server")]
public class TableTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;

    [Fact]
    public void CreateQueryDelete_WithPaging()
    {
        var service = Clients.Service(_s);
        var prefix = "pg" + Guid.NewGuid().ToString("N")[..8];
        var names = Enumerable.Range(0, 7).Select(i => $"{prefix}{i:D2}").ToList();
        foreach (var n in names)
        {
            Response<TableItem> created = service.CreateTable(n);
            Assert.Equal(n, created.Value.Name);
        }
        // Range filter on the prefix, 3 per page: 3 + 3 + 1 with continuation tokens in between.
        var pages = service.Query(filter: $"TableName ge '{prefix}' and TableName lt '{prefix}~'", maxPerPage: 3).AsPages().ToList();
        Assert.Equal(new[] { 3, 3, 1 }, pages.Select(p => p.Values.Count));
        Assert.NotNull(pages[0].ContinuationToken);
        Assert.Null(pages[^1].ContinuationToken);
        Assert.Equal(names, pages.SelectMany(p => p.Values).Select(t => t.Name));

        // Resume later from the first page's token with a new client.
        var resumed = Clients.Service(_s).Query(filter: $"TableName ge '{prefix}' and TableName lt '{prefix}~'", maxPerPage: 3)
            .AsPages(pages[0].ContinuationToken).First();
        Assert.Equal(names.Skip(3).Take(3), resumed.Values.Select(t => t.Name));

        // LINQ over TableItem.
        Assert.Single(service.Query(t => t.Name == names[4]));

        var e = Assert.Throws<RequestFailedException>(() => service.CreateTable(names[0]));
        Assert.Equal(409, e.Status);
        Assert.Equal("TableAlreadyExists", e.ErrorCode);

        foreach (var n in names) service.DeleteTable(n);
        Assert.Empty(service.Query(filter: $"TableName ge '{prefix}' and TableName lt '{prefix}~'"));
        var missing = Assert.Throws<RequestFailedException>(() => service.GetTableClient(names[0]).GetEntity<TableEntity>("a", "b"));
        Assert.Equal(404, missing.Status);
        Assert.Equal("TableNotFound", missing.ErrorCode);
    }

    [Fact]
    public void InvalidTableName_Is400()
    {
        var e = Assert.Throws<RequestFailedException>(() => Clients.Service(_s, Clients.Options(0)).CreateTable("1bad"));
        Assert.Equal(400, e.Status);
        Assert.Equal("InvalidResourceName", e.ErrorCode);
    }
}
