// An Orleans 10.4.2 cluster of in-process silos keeping membership, grain state and reminders in tablestone
// (the Azure Table providers), as an application using Azure Table storage would. Every wait is bounded.
using System.Diagnostics;
using Azure.Data.Tables;
using Microsoft.Extensions.DependencyInjection;
using Orleans.Configuration;
using Orleans.Hosting;
using Orleans.TestingHost;
using Xunit;
using Xunit.Abstractions;

namespace Tablestone.E2E.Orleans;

public sealed class OrleansCluster : IAsyncLifetime
{
    public TablestoneServer Server { get; } = new();
    public TestCluster Cluster { get; private set; } = null!;
    public string ClusterId { get; } = "c" + Guid.NewGuid().ToString("N")[..8];
    public const string MembershipTable = "OrleansSiloInstances";

    private TableServiceClient NewClient() => new(Server.ConnectionString);

    public const string ConnectionStringKey = "TablestoneConnectionString";

    public async Task InitializeAsync()
    {
        var builder = new TestClusterBuilder(3);
        builder.Options.ClusterId = ClusterId;
        builder.Options.UseTestClusterMembership = false;
        builder.Properties[ConnectionStringKey] = Server.ConnectionString;
        builder.AddSiloBuilderConfigurator<SiloConfigurator>();
        builder.AddClientBuilderConfigurator<ClientConfigurator>();
        Cluster = builder.Build();
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        await Cluster.DeployAsync().WaitAsync(cts.Token);
    }

    public async Task DisposeAsync()
    {
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            await Cluster.StopAllSilosAsync().WaitAsync(cts.Token);
        }
        finally
        {
            await Cluster.DisposeAsync();
            Server.Dispose();
        }
    }

    /// <summary>The membership rows of this cluster, read through the Table API.</summary>
    public List<TableEntity> MembershipRows() =>
        NewClient().GetTableClient(MembershipTable).Query<TableEntity>(e => e.PartitionKey == ClusterId).ToList();

    /// <summary>The silo address of a membership row, as SiloAddress.ToString() writes it: S{ip}:{port}:{generation}.</summary>
    public static string SiloOf(TableEntity row) => $"S{row["Address"]}:{row["Port"]}:{row["Generation"]}";

    public static async Task Eventually(Func<Task<bool>> condition, TimeSpan limit, string what)
    {
        var sw = Stopwatch.StartNew();
        while (sw.Elapsed < limit)
        {
            if (await condition()) return;
            await Task.Delay(250);
        }
        throw new TimeoutException($"not within {limit.TotalSeconds:F0}s: {what}");
    }
}

public sealed class SiloConfigurator : ISiloConfigurator
{
    public void Configure(ISiloBuilder silo)
    {
        var cs = silo.Configuration[OrleansCluster.ConnectionStringKey]!;
        silo.UseAzureStorageClustering(o => o.TableServiceClient = new TableServiceClient(cs));
        silo.AddAzureTableGrainStorage("tables", o => o.TableServiceClient = new TableServiceClient(cs));
        silo.UseAzureTableReminderService(o => o.TableServiceClient = new TableServiceClient(cs));
        silo.Configure<ReminderOptions>(o =>
        {
            o.MinimumReminderPeriod = TimeSpan.FromSeconds(1);
            o.RefreshReminderListPeriod = TimeSpan.FromSeconds(2);
            o.InitializationTimeout = TimeSpan.FromSeconds(30);
        });
        // Fast failure detection: a killed silo is voted dead within seconds.
        silo.Configure<ClusterMembershipOptions>(o =>
        {
            o.ProbeTimeout = TimeSpan.FromSeconds(1);
            o.NumMissedProbesLimit = 2;
            o.NumVotesForDeathDeclaration = 1;
            o.TableRefreshTimeout = TimeSpan.FromSeconds(2);
            o.IAmAliveTablePublishTimeout = TimeSpan.FromSeconds(5);
        });
    }
}

public sealed class ClientConfigurator : IClientBuilderConfigurator
{
    public void Configure(Microsoft.Extensions.Configuration.IConfiguration configuration, IClientBuilder client)
    {
        var cs = configuration[OrleansCluster.ConnectionStringKey]!;
        client.UseAzureStorageClustering(o => o.TableServiceClient = new TableServiceClient(cs));
    }
}

[CollectionDefinition("orleans")]
public sealed class OrleansCollection : ICollectionFixture<OrleansCluster> { }

/// <summary>The scenarios run in order on one cluster (xunit runs a class's tests in declaration order
/// within a collection only by name, so each test stands alone on the cluster as it finds it).</summary>
[Collection("orleans")]
public class ClusterTests(OrleansCluster fx, ITestOutputHelper output)
{
    private TestCluster C => fx.Cluster;

    [Fact]
    public async Task A_ClusterForms_MembershipRowsVisibleThroughTheTableApi()
    {
        var active = C.GetActiveSilos().Count();
        Assert.True(active >= 2, $"{active} silos active");
        await OrleansCluster.Eventually(() => Task.FromResult(
            fx.MembershipRows().Count(r => r.GetString("Status") == "Active") >= active), TimeSpan.FromSeconds(30), "Active rows for every silo");
        var rows = fx.MembershipRows();
        Assert.Contains(rows, r => r.RowKey == "VersionRow");
        foreach (var r in rows) output.WriteLine($"[{r.RowKey}] {string.Join(", ", r.Keys.Where(k => k is "Status" or "SiloName" or "Address" or "Port"))}");
        // One row per silo (beside the version row and any bookkeeping row of the provider's): the silo rows carry a Status.
        var siloRows = rows.Where(r => r.GetString("Status") != null).ToList();
        Assert.True(siloRows.Count >= active, $"{siloRows.Count} silo rows for {active} silos");
        foreach (var r in siloRows)
        {
            Assert.False(string.IsNullOrEmpty(r.GetString("Address")));
            Assert.NotNull(r.GetString("IAmAliveTime"));
        }
    }

    [Fact]
    public async Task B_GrainState_SurvivesTheSiloThatHeldIt()
    {
        var grain = C.Client.GetGrain<ICounterGrain>("survivor-" + Guid.NewGuid().ToString("N")[..6]);
        Assert.Equal(1, await grain.Increment());
        Assert.Equal(2, await grain.Increment());
        var holder = await grain.Silo();
        var handle = C.GetActiveSilos().Single(s => s.SiloAddress.ToString() == holder);
        // The state row is in the grain storage table (default name OrleansGrainState).
        var stateRows = new TableServiceClient(fx.Server.ConnectionString).GetTableClient("OrleansGrainState").Query<TableEntity>().ToList();
        Assert.NotEmpty(stateRows);
        using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60))) await C.StopSiloAsync(handle).WaitAsync(cts.Token);
        var after = await grain.Get();
        Assert.Equal(2, after);
        Assert.NotEqual(holder, await grain.Silo());
        Assert.Equal(3, await grain.Increment());
        await C.StartAdditionalSiloAsync();
    }

    [Fact]
    public async Task C_TwoActivationsRacing_OnOneState_GetInconsistentState()
    {
        var grain = C.Client.GetGrain<IRacerGrain>("race-" + Guid.NewGuid().ToString("N")[..6]);
        // Same silo (a stateless worker runs where it is called from: one client gateway), two activations.
        var results = await Task.WhenAll(grain.WriteOnceAllHaveRead(2), grain.WriteOnceAllHaveRead(2));
        output.WriteLine(string.Join(" | ", results));
        Assert.Contains("ok", results);
        Assert.Contains(results, r => r.StartsWith("InconsistentStateException"));
    }

    [Fact]
    public async Task D_KilledSilo_IsDeclaredDead()
    {
        var added = await C.StartAdditionalSiloAsync();
        var address = added.SiloAddress.ToString();
        await OrleansCluster.Eventually(() => Task.FromResult(
            fx.MembershipRows().Any(r => r.GetString("Status") == "Active" && OrleansCluster.SiloOf(r) == address)),
            TimeSpan.FromSeconds(30), "the new silo's row Active");
        using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60))) await C.KillSiloAsync(added).WaitAsync(cts.Token);
        await OrleansCluster.Eventually(() => Task.FromResult(
            fx.MembershipRows().Any(r => r.GetString("Status") == "Dead" && OrleansCluster.SiloOf(r) == address)),
            TimeSpan.FromSeconds(60), "the killed silo declared Dead in the membership table: "
                + string.Join("; ", fx.MembershipRows().Select(r => OrleansCluster.SiloOf(r) + "=" + r.GetString("Status"))) + " looking for " + address);
    }

    [Fact]
    public async Task E_Reminder_Ticks_AndKeepsTickingAfterItsSiloRestarts()
    {
        var key = "ticker-" + Guid.NewGuid().ToString("N")[..6];
        var grain = C.Client.GetGrain<ITickerGrain>(key);
        await grain.Start(TimeSpan.FromSeconds(2));
        int Count() => TickerGrain.Ticks.Count(t => t.Grain == key);
        await OrleansCluster.Eventually(() => Task.FromResult(Count() >= 2), TimeSpan.FromSeconds(30), "two ticks");
        var rows = new TableServiceClient(fx.Server.ConnectionString).GetTableClient("OrleansReminders").Query<TableEntity>()
            .Where(r => r.GetString("ReminderName") == "tick").ToList();
        Assert.NotEmpty(rows);

        var lastSilo = TickerGrain.Ticks.Last(t => t.Grain == key).Silo;
        var handle = C.GetActiveSilos().Single(s => s.SiloAddress.ToString() == lastSilo);
        using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60))) await C.RestartSiloAsync(handle).WaitAsync(cts.Token);
        var mark = DateTime.UtcNow;
        await OrleansCluster.Eventually(() => Task.FromResult(TickerGrain.Ticks.Count(t => t.Grain == key && t.At > mark) >= 2),
            TimeSpan.FromSeconds(60), "two ticks after the silo restarted");
        await grain.Stop();
    }
}
