// The legacy .NET clients against tablestone's Cosmos DB listener (issue 38, docs/cosmos-mode.md,
// "Legacy .NET"), addressed with the Cosmos DB emulator's connection string over http.
// Microsoft.Azure.Cosmos.Table 1.0.8 takes its Cosmos document protocol only for https://localhost, so
// over http it stays on REST and works; WindowsAzure.Storage 9.3.3 never retries a 429.
// These tests address their own servers, so scripts/test.sh runs them in one shape only.
using System.Net;
using Xunit;
using Microsoft.Azure.Cosmos.Table;
using Cosmos = Microsoft.Azure.Cosmos.Table;
using Was = Microsoft.WindowsAzure.Storage;
using WasTable = Microsoft.WindowsAzure.Storage.Table;

namespace Tablestone.E2E.Legacy.CosmosListener;

public sealed class CosmosListenerFixture : IDisposable
{
    public const string EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
    public int Port { get; } = TablestoneServer.FreePort();
    public int RuPort { get; } = TablestoneServer.FreePort();
    public TablestoneServer Server { get; }
    public TablestoneServer RuServer { get; }

    public CosmosListenerFixture()
    {
        Server = new TablestoneServer(new[] { "--cosmosPort", Port.ToString() }, host: "127.0.0.1");
        RuServer = new TablestoneServer(new[] { "--cosmosPort", RuPort.ToString(), "--cosmosRuPerSecond", "10" }, host: "127.0.0.1");
    }

    public static string ConnectionString(int port) =>
        $"DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey={EmulatorKey};TableEndpoint=http://localhost:{port}/;";

    public void Dispose()
    {
        Server.Dispose();
        RuServer.Dispose();
    }
}

[Trait("Flavour", "Cosmos")]
public class CosmosListenerTests(CosmosListenerFixture fx) : IClassFixture<CosmosListenerFixture>
{
    [Fact]
    public void CosmosTable_OverHttp_UsesRest_AndSeesNoKeyOrder()
    {
        var client = Cosmos.CloudStorageAccount.Parse(CosmosListenerFixture.ConnectionString(fx.Port)).CreateCloudTableClient();
        client.DefaultRequestOptions.RetryPolicy = new Cosmos.NoRetry();
        var table = client.GetTableReference(Names.Unique("leg"));
        Assert.True(table.CreateIfNotExists());
        var batch = new Cosmos.TableBatchOperation();
        var keys = Enumerable.Range(0, 30).Select(i => i.ToString("D2")).ToList();
        foreach (var rk in keys) batch.Insert(new Cosmos.DynamicTableEntity("p", rk) { Properties = { ["V"] = new Cosmos.EntityProperty(1) } });
        table.ExecuteBatch(batch);
        table.Execute(Cosmos.TableOperation.Merge(new Cosmos.DynamicTableEntity("p", "00") { ETag = "*", Properties = { ["W"] = new Cosmos.EntityProperty(2) } }));
        var merged = (Cosmos.DynamicTableEntity)table.Execute(Cosmos.TableOperation.Retrieve<Cosmos.DynamicTableEntity>("p", "00")).Result;
        Assert.Equal(new int?[] { 1, 2 }, new[] { merged.Properties["V"].Int32Value, merged.Properties["W"].Int32Value });

        var order = table.ExecuteQuery(new Cosmos.TableQuery<Cosmos.DynamicTableEntity>()).Select(e => e.RowKey).ToList();
        Assert.Equal(keys, order.OrderBy(k => k, StringComparer.Ordinal).ToList());
        Assert.NotEqual(keys, order);
    }

    [Fact]
    public async Task WindowsAzureStorage_DoesNotRetry429()
    {
        var client = Was.CloudStorageAccount.Parse(CosmosListenerFixture.ConnectionString(fx.RuPort)).CreateCloudTableClient();
        // The default policy (ExponentialRetry) stays: it is what does not retry 429.
        var table = client.GetTableReference(Names.Unique("leg"));
        await table.CreateIfNotExistsAsync();
        Was.StorageException? throttled = null;
        Was.OperationContext? context = null;
        for (var i = 0; i < 20 && throttled == null; i++)
        {
            context = new Was.OperationContext();
            try
            {
                await table.ExecuteAsync(WasTable.TableOperation.Insert(new WasTable.DynamicTableEntity("p", $"r{i}")), null, context);
            }
            catch (Was.StorageException e) { throttled = e; }
        }
        Assert.NotNull(throttled);
        Assert.Equal(429, throttled!.RequestInformation.HttpStatusCode);
        Assert.Single(context!.RequestResults); // one attempt: no retry
    }
}
