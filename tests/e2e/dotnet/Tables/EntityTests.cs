using Azure;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

/// <summary>A typed entity with a property of every Edm type the SDK maps.</summary>
public sealed class Every : ITableEntity
{
    public string PartitionKey { get; set; } = "";
    public string RowKey { get; set; } = "";
    public DateTimeOffset? Timestamp { get; set; }
    public ETag ETag { get; set; }

    public string? Text { get; set; }
    public int Int32 { get; set; }
    public long Int64 { get; set; }
    public double Double { get; set; }
    public double WholeDouble { get; set; }
    public bool Flag { get; set; }
    public Guid Id { get; set; }
    public byte[]? Bytes { get; set; }
    public BinaryData? Blob { get; set; }
    public DateTimeOffset When { get; set; }
    public DateTime WhenUtc { get; set; }
    public DateTimeOffset? Maybe { get; set; }
    public long? MaybeLong { get; set; }
    public string? Nothing { get; set; }
}

[Collection("server")]
public class EntityTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;

    // 7 fractional digits (ticks) in both date types.
    private static readonly DateTimeOffset When = new DateTimeOffset(2024, 2, 29, 23, 59, 58, TimeSpan.Zero).AddTicks(1234567);
    private static readonly DateTime WhenUtc = new DateTime(1999, 12, 31, 1, 2, 3, DateTimeKind.Utc).AddTicks(9876543);

    private static Every Sample(string pk, string rk) => new()
    {
        PartitionKey = pk, RowKey = rk, Text = "h\u00e9llo 'quoted' \"double\" \u2603",
        Int32 = -2147483648, Int64 = long.MaxValue, Double = 3.141592653589793, WholeDouble = 2.0, Flag = true,
        Id = Guid.Parse("7c6b1a52-6a2c-4c0f-9fd0-3c8f1f9b2a11"), Bytes = new byte[] { 0, 1, 2, 255 },
        Blob = BinaryData.FromBytes(new byte[] { 9, 8, 7 }), When = When, WhenUtc = WhenUtc,
        Maybe = null, MaybeLong = null, Nothing = null,
    };

    [Fact]
    public void TypedEntity_EveryEdmType_RoundTrips()
    {
        var table = Clients.NewTable(_s);
        var added = table.AddEntity(Sample("p", "r"));
        Assert.False(string.IsNullOrEmpty(added.Headers.ETag?.ToString()));
        var got = table.GetEntity<Every>("p", "r").Value;
        Assert.Equal("h\u00e9llo 'quoted' \"double\" \u2603", got.Text);
        Assert.Equal(-2147483648, got.Int32);
        Assert.Equal(long.MaxValue, got.Int64);
        Assert.Equal(3.141592653589793, got.Double);
        Assert.Equal(2.0, got.WholeDouble);
        Assert.True(got.Flag);
        Assert.Equal(Guid.Parse("7c6b1a52-6a2c-4c0f-9fd0-3c8f1f9b2a11"), got.Id);
        Assert.Equal(new byte[] { 0, 1, 2, 255 }, got.Bytes);
        Assert.Equal(new byte[] { 9, 8, 7 }, got.Blob!.ToArray());
        Assert.Equal(When, got.When);
        Assert.Equal(When.Ticks, got.When.UtcTicks);
        Assert.Equal(WhenUtc, got.WhenUtc.ToUniversalTime());
        Assert.Null(got.Maybe);
        Assert.Null(got.MaybeLong);
        Assert.Null(got.Nothing);
        Assert.NotNull(got.Timestamp);
        Assert.True(Math.Abs((DateTimeOffset.UtcNow - got.Timestamp!.Value).TotalMinutes) < 5);
        Assert.Equal(added.Headers.ETag, got.ETag);
    }

    [Fact]
    public void TableEntity_EveryEdmType_ThroughTheDictionary()
    {
        var table = Clients.NewTable(_s);
        var e = new TableEntity("pk 'x'", "rk \u00e9")
        {
            ["s"] = "text", ["i"] = 42, ["l"] = 1L << 53, ["d"] = 1.5, ["whole"] = 7.0, ["b"] = false,
            ["g"] = Guid.Empty, ["bin"] = new byte[] { 1, 2, 3 }, ["dto"] = When, ["dt"] = WhenUtc, ["n"] = null,
        };
        table.AddEntity(e);
        var got = table.GetEntity<TableEntity>("pk 'x'", "rk \u00e9").Value;
        Assert.Equal("text", got.GetString("s"));
        Assert.Equal(42, got.GetInt32("i"));
        Assert.Equal(1L << 53, got.GetInt64("l"));
        Assert.Equal(1.5, got.GetDouble("d"));
        Assert.Equal(7.0, got.GetDouble("whole"));
        Assert.IsType<double>(got["whole"]);  // a whole double stays Edm.Double
        Assert.False(got.GetBoolean("b"));
        Assert.Equal(Guid.Empty, got.GetGuid("g"));
        Assert.Equal(new byte[] { 1, 2, 3 }, got.GetBinary("bin"));
        Assert.Equal(When, got.GetDateTimeOffset("dto"));
        Assert.Equal(WhenUtc, got.GetDateTime("dt")!.Value.ToUniversalTime());
        Assert.False(got.ContainsKey("n"));  // a null property is not stored
        Assert.Equal("pk 'x'", got.PartitionKey);
        Assert.Equal("rk \u00e9", got.RowKey);
    }

    [Fact]
    public void Select_ReturnsOnlyTheNamedProperties()
    {
        var table = Clients.NewTable(_s);
        table.AddEntity(Sample("p", "r"));
        var got = table.GetEntity<TableEntity>("p", "r", select: new[] { "Int64", "Text" }).Value;
        Assert.Equal(long.MaxValue, got.GetInt64("Int64"));
        Assert.Equal("h\u00e9llo 'quoted' \"double\" \u2603", got.GetString("Text"));
        Assert.False(got.ContainsKey("Double"));
        var rows = table.Query<TableEntity>(select: new[] { "Flag" }).ToList();
        Assert.Single(rows);
        Assert.True(rows[0].GetBoolean("Flag"));
        Assert.False(rows[0].ContainsKey("Text"));
    }

    [Fact]
    public void Missing_Entity_Is404_And_GetEntityIfExists_HasNoValue()
    {
        var table = Clients.NewTable(_s);
        var e = Assert.Throws<RequestFailedException>(() => table.GetEntity<TableEntity>("no", "pe"));
        Assert.Equal(404, e.Status);
        Assert.Equal("ResourceNotFound", e.ErrorCode);
        Assert.False(table.GetEntityIfExists<TableEntity>("no", "pe").HasValue);
    }

    [Fact]
    public void Duplicate_Add_Is409_EntityAlreadyExists()
    {
        var table = Clients.NewTable(_s);
        table.AddEntity(new TableEntity("p", "r"));
        var e = Assert.Throws<RequestFailedException>(() => table.AddEntity(new TableEntity("p", "r")));
        Assert.Equal(409, e.Status);
        Assert.Equal("EntityAlreadyExists", e.ErrorCode);
    }
}
