using Azure.Core;
using Azure.Data.Tables;

namespace Tablestone.E2E.Tables;

/// <summary>Clients on the collection's server with short, bounded retries (a failing test fails fast).</summary>
public static class Clients
{
    public static TableClientOptions Options(int maxRetries = 2)
    {
        var o = new TableClientOptions();
        o.Retry.MaxRetries = maxRetries;
        o.Retry.Mode = RetryMode.Fixed;
        o.Retry.Delay = TimeSpan.FromMilliseconds(20);
        o.Retry.MaxDelay = TimeSpan.FromMilliseconds(50);
        o.Retry.NetworkTimeout = TimeSpan.FromSeconds(30);
        return o;
    }

    /// <summary>The localhost shape: the SDK takes localhost on a port other than 10002 for a Cosmos DB endpoint.</summary>
    public static bool CosmosShape(TablestoneServer s) => s.Host == "localhost" && s.Port != 10002;

    public static TableServiceClient Service(TablestoneServer s, TableClientOptions? o = null) =>
        new(s.ConnectionString, o ?? Options());

    /// <summary>A created table with a unique name; the caller deletes it (or leaves it to the server's temp dir).</summary>
    public static TableClient NewTable(TablestoneServer s, TableClientOptions? o = null)
    {
        var name = Names.Unique();
        var service = Service(s, o);
        service.CreateTable(name);
        return service.GetTableClient(name);
    }
}
