using Azure;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

public sealed class Order : ITableEntity
{
    public string PartitionKey { get; set; } = "";
    public string RowKey { get; set; } = "";
    public DateTimeOffset? Timestamp { get; set; }
    public ETag ETag { get; set; }
    public string Customer { get; set; } = "";
    public int Quantity { get; set; }
    public long Cents { get; set; }
    public double Weight { get; set; }
    public bool Shipped { get; set; }
    public DateTimeOffset Placed { get; set; }
    public Guid Ref { get; set; }
}

[Collection("server")]
public class QueryTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;
    private static readonly DateTimeOffset T0 = new(2024, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private TableClient Seeded(int n = 30)
    {
        var table = Clients.NewTable(_s);
        var actions = new List<TableTransactionAction>();
        for (var i = 0; i < n; i++)
        {
            actions.Add(new TableTransactionAction(TableTransactionActionType.Add, new Order
            {
                PartitionKey = i % 2 == 0 ? "even" : "odd", RowKey = $"{i:D3}",
                Customer = i % 3 == 0 ? "O'Brien" : "Smith", Quantity = i, Cents = 1000L * i + (1L << 40),
                Weight = i + 0.5, Shipped = i % 5 == 0, Placed = T0.AddDays(i), Ref = new Guid(i, 0, 0, new byte[8]),
            }));
        }
        foreach (var group in actions.GroupBy(a => a.Entity.PartitionKey)) table.SubmitTransaction(group);
        return table;
    }

    [Fact]
    public void Linq_Expressions_TranslateAndFilter()
    {
        var table = Seeded();
        var shippedEven = table.Query<Order>(o => o.PartitionKey == "even" && o.Shipped).Select(o => o.Quantity).ToList();
        Assert.Equal(new[] { 0, 10, 20 }, shippedEven);
        Assert.Equal(Enumerable.Range(25, 5), table.Query<Order>(o => o.Quantity >= 25).Select(o => o.Quantity).OrderBy(q => q));
        var big = 1000L * 28 + (1L << 40);
        Assert.Equal(new[] { 29 }, table.Query<Order>(o => o.Cents > big).Select(o => o.Quantity));
        Assert.Equal(new[] { 3 }, table.Query<Order>(o => o.Placed == T0.AddDays(3)).Select(o => o.Quantity));
        var guid = new Guid(7, 0, 0, new byte[8]);
        Assert.Equal(new[] { 7 }, table.Query<Order>(o => o.Ref == guid).Select(o => o.Quantity));
        Assert.Equal(new[] { 1, 2 }, table.Query<Order>(o => o.Weight < 3.0 && o.Weight > 1.0).Select(o => o.Quantity).OrderBy(q => q));
        Assert.Equal(10, table.Query<Order>(o => o.Customer == "O'Brien").Count());
        Assert.Equal(20, table.Query<Order>(o => o.Customer != "O'Brien").Count());
        Assert.Equal(new[] { "000", "001", "002" },
            table.Query<Order>(o => o.RowKey.CompareTo("003") < 0).Select(o => o.RowKey).OrderBy(r => r, StringComparer.Ordinal));
    }

    [Fact]
    public void CreateQueryFilter_QuotesValues()
    {
        var table = Seeded();
        var customer = "O'Brien";
        var filter = TableClient.CreateQueryFilter($"Customer eq {customer} and Quantity lt {10}");
        Assert.Contains("'O''Brien'", filter);
        Assert.Equal(new[] { 0, 3, 6, 9 }, table.Query<Order>(filter).Select(o => o.Quantity).OrderBy(q => q));
        var placed = T0.AddDays(4);
        var guid = new Guid(4, 0, 0, new byte[8]);
        var cents = 4000L + (1L << 40);
        Assert.Single(table.Query<Order>(TableClient.CreateQueryFilter($"Placed eq {placed} and Ref eq {guid} and Cents eq {cents} and Shipped eq {false}")));
        // Quotes in keys survive a point filter too.
        table.AddEntity(new TableEntity("it's", "a 'row'") { ["v"] = 1 });
        var pk = "it's";
        Assert.Single(table.Query<TableEntity>(TableClient.CreateQueryFilter($"PartitionKey eq {pk}")));
    }

    [Fact]
    public void MaxPerPage_AsPages_TokenResumedLater()
    {
        var table = Seeded(30);
        var pages = table.Query<Order>(filter: "PartitionKey eq 'even'", maxPerPage: 4).AsPages().ToList();
        Assert.Equal(new[] { 4, 4, 4, 3 }, pages.Select(p => p.Values.Count));
        Assert.All(pages.Take(3), p => Assert.False(string.IsNullOrEmpty(p.ContinuationToken)));
        Assert.Null(pages[^1].ContinuationToken);

        // Cross-partition paging and a token kept as a string and resumed by another client.
        // $select returns only the named properties: the keys must be named to come back.
        var keys = new[] { "PartitionKey", "RowKey", "Quantity" };
        var first = table.Query<TableEntity>(maxPerPage: 7, select: keys).AsPages().First();
        Assert.Equal(7, first.Values.Count);
        string token = first.ContinuationToken!;
        var other = Clients.Service(_s).GetTableClient(table.Name);
        var rest = other.Query<TableEntity>(maxPerPage: 7, select: keys).AsPages(token).SelectMany(p => p.Values).ToList();
        Assert.Equal(23, rest.Count);
        var all = first.Values.Concat(rest).Select(e => (e.PartitionKey, e.RowKey)).ToList();
        Assert.Equal(30, all.Distinct().Count());
        Assert.Equal(all.OrderBy(k => k.PartitionKey, StringComparer.Ordinal).ThenBy(k => k.RowKey, StringComparer.Ordinal), all);
    }

    [Fact]
    public async Task Async_Query_DrainsEveryPage()
    {
        var table = Seeded(30);
        var n = 0;
        var pages = 0;
        await foreach (var page in table.QueryAsync<Order>(maxPerPage: 8).AsPages())
        {
            pages++;
            n += page.Values.Count;
        }
        Assert.Equal(30, n);
        Assert.Equal(4, pages);
    }
}
