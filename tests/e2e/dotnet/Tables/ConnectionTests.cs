using Azure;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

[Collection("server")]
public class ConnectionTests(ServerFixture fx)
{
    private readonly TablestoneServer _s = fx.Server;

    [Fact]
    public void SpelledOutConnectionString_RoundTrips()
    {
        var service = new TableServiceClient(_s.ConnectionString, Clients.Options());
        Assert.Equal(TablestoneServer.Account, service.AccountName);
        var name = Names.Unique();
        var table = service.GetTableClient(name);
        table.Create();
        table.AddEntity(new TableEntity("p", "r") { ["v"] = 1 });
        Assert.Equal(1, table.GetEntity<TableEntity>("p", "r").Value.GetInt32("v"));
        Assert.Equal(TablestoneServer.Account, table.AccountName);
        service.DeleteTable(name);
    }

    [Fact]
    public void AccountKeyCredential_WithEndpointUri()
    {
        var service = new TableServiceClient(_s.Endpoint,
            new TableSharedKeyCredential(TablestoneServer.Account, TablestoneServer.Key), Clients.Options());
        var name = Names.Unique();
        service.CreateTableIfNotExists(name);
        service.CreateTableIfNotExists(name);  // the 409 TableAlreadyExists is absorbed by the SDK
        Assert.Single(service.Query(filter: $"TableName eq '{name}'"));
        service.DeleteTable(name);
        service.DeleteTable(name);  // 404 on delete is absorbed too
    }

    [Fact]
    public void UseDevelopmentStorage_PointsAtPort10002()
    {
        var service = new TableServiceClient("UseDevelopmentStorage=true");
        Assert.Equal(TablestoneServer.Account, service.AccountName);
        Assert.Equal(new Uri("http://127.0.0.1:10002/devstoreaccount1"), service.Uri);
        // A round trip when 10002 is free (always in CI; locally another server may hold it).
        TablestoneServer? own;
        try { own = new TablestoneServer(port: 10002, host: "127.0.0.1"); }
        catch (InvalidOperationException) { return; }
        using (own)
        {
            var name = Names.Unique();
            service.CreateTable(name);
            var table = service.GetTableClient(name);
            table.UpsertEntity(new TableEntity("a", "b") { ["x"] = "y" });
            Assert.Equal("y", table.GetEntity<TableEntity>("a", "b").Value.GetString("x"));
        }
    }

    [Fact]
    public void WrongKey_Is403_AuthenticationFailed()
    {
        var badKey = Convert.ToBase64String(new byte[64]);
        var cs = $"DefaultEndpointsProtocol=http;AccountName={TablestoneServer.Account};AccountKey={badKey};TableEndpoint={_s.Endpoint};";
        var service = new TableServiceClient(cs, Clients.Options(0));
        var e = Assert.Throws<RequestFailedException>(() => service.Query().ToList());
        Assert.Equal(403, e.Status);
        Assert.Equal("AuthenticationFailed", e.ErrorCode);
    }
}
