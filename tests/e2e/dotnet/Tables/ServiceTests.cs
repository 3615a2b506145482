using Azure;
using Azure.Data.Tables;
using Azure.Data.Tables.Models;
using Xunit;

namespace Tablestone.E2E.Tables;

/// <summary>Service properties change the account for every test: a server of its own.</summary>
public class ServiceTests : IDisposable
{
    private readonly TablestoneServer _s = new();
    public void Dispose() => _s.Dispose();

    [Fact]
    public void Properties_Cors_Logging_Metrics_RoundTrip()
    {
        var service = Clients.Service(_s);
        TableServiceProperties props = service.GetProperties().Value;
        Assert.NotNull(props.Logging);
        props.Logging.Read = true;
        props.Logging.Write = true;
        props.Logging.Delete = false;
        props.Logging.RetentionPolicy = new TableRetentionPolicy(true) { Days = 5 };
        props.HourMetrics.Enabled = true;
        props.HourMetrics.IncludeApis = true;
        props.HourMetrics.RetentionPolicy = new TableRetentionPolicy(true) { Days = 3 };
        props.Cors.Clear();
        props.Cors.Add(new TableCorsRule("https://a.example,https://b.example", "GET,PUT,MERGE", "x-ms-meta-*,Content-Type", "x-ms-request-id", 300));
        service.SetProperties(props);

        var back = Clients.Service(_s).GetProperties().Value;
        Assert.True(back.Logging.Read);
        Assert.True(back.Logging.Write);
        Assert.False(back.Logging.Delete);
        Assert.Equal(5, back.Logging.RetentionPolicy.Days);
        Assert.True(back.HourMetrics.Enabled);
        Assert.True(back.HourMetrics.IncludeApis);
        Assert.Equal(3, back.HourMetrics.RetentionPolicy.Days);
        var rule = Assert.Single(back.Cors);
        Assert.Equal("https://a.example,https://b.example", rule.AllowedOrigins);
        Assert.Equal("GET,PUT,MERGE", rule.AllowedMethods);
        Assert.Equal(300, rule.MaxAgeInSeconds);

        // CORS is applied: a preflight from an allowed origin is answered.
        using var http = new HttpClient();
        var req = new HttpRequestMessage(HttpMethod.Options, new Uri(_s.Endpoint + "/Tables"));
        req.Headers.Add("Origin", "https://a.example");
        req.Headers.Add("Access-Control-Request-Method", "GET");
        var resp = http.Send(req);
        Assert.Equal(200, (int)resp.StatusCode);
        Assert.Equal("https://a.example", resp.Headers.GetValues("Access-Control-Allow-Origin").Single());
    }

    [Fact]
    public void Statistics_FromTheSecondary()
    {
        var stats = Clients.Service(_s).GetStatistics().Value;
        Assert.NotNull(stats.GeoReplication);
        Assert.Equal(TableGeoReplicationStatus.Live, stats.GeoReplication.Status);
    }

    [Fact]
    public void Acl_WithManyIdentifiers()
    {
        var table = Clients.NewTable(_s);
        var ids = Enumerable.Range(0, 5).Select(i => new TableSignedIdentifier($"id{i}",
            new TableAccessPolicy(new DateTimeOffset(2024, 1, 1, 0, 0, 0, TimeSpan.Zero), new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero), "raud"))).ToList();
        table.SetAccessPolicy(ids);
        var back = table.GetAccessPolicies().Value;
        Assert.Equal(ids.Select(i => i.Id), back.Select(i => i.Id));
        Assert.Equal(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero), back[0].AccessPolicy.ExpiresOn);
        Assert.Equal("raud", back[0].AccessPolicy.Permission);
        // Six identifiers are one too many.
        ids.Add(new TableSignedIdentifier("id5", new TableAccessPolicy(null, null, "r")));
        var e = Assert.Throws<RequestFailedException>(() => table.SetAccessPolicy(ids));
        Assert.Equal(400, e.Status);
    }
}
