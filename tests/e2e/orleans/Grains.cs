using System.Collections.Concurrent;
using Orleans.Concurrency;
using Orleans.Runtime;

namespace Tablestone.E2E.Orleans;

[GenerateSerializer]
public sealed class CounterState
{
    [Id(0)] public int Value { get; set; }
}

public interface ICounterGrain : IGrainWithStringKey
{
    Task<int> Increment();
    Task<int> Get();
    Task<string> Silo();
}

/// <summary>A counter kept in tablestone through the Azure Table grain storage.</summary>
public sealed class CounterGrain(
    [PersistentState("counter", "tables")] IPersistentState<CounterState> state, ILocalSiloDetails silo) : Grain, ICounterGrain
{
    public async Task<int> Increment()
    {
        state.State.Value++;
        await state.WriteStateAsync();
        return state.State.Value;
    }

    public Task<int> Get() => Task.FromResult(state.State.Value);
    public Task<string> Silo() => Task.FromResult(silo.SiloAddress.ToString());
}

public interface IRacerGrain : IGrainWithStringKey
{
    /// <summary>Waits until `parties` activations of this grain id are inside this call (each holding the state it
    /// read at activation), then writes; returns "ok" or the error's type name.</summary>
    Task<string> WriteOnceAllHaveRead(int parties);
}

/// <summary>A stateless worker with up to two activations per silo: two concurrent calls get two activations of
/// one grain id, each holding the state (and ETag) it read at activation, racing on one storage row. The
/// activations meet before writing (the silos share this process), so the race does not depend on timing: a
/// fixed delay lost it whenever the second activation's read came after the first one's write.</summary>
[StatelessWorker(2)]
public sealed class RacerGrain([PersistentState("race", "tables")] IPersistentState<CounterState> state) : Grain, IRacerGrain
{
    private sealed class Meeting
    {
        public int Arrived;
        public readonly TaskCompletionSource All = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    private static readonly ConcurrentDictionary<string, Meeting> Meetings = new();

    public async Task<string> WriteOnceAllHaveRead(int parties)
    {
        var meeting = Meetings.GetOrAdd(this.GetPrimaryKeyString(), _ => new Meeting());
        if (Interlocked.Increment(ref meeting.Arrived) >= parties) meeting.All.TrySetResult();
        try
        {
            await meeting.All.Task.WaitAsync(TimeSpan.FromSeconds(30));
        }
        catch (TimeoutException)
        {
            return $"other: {meeting.Arrived} of {parties} activations met within 30 s";
        }
        state.State.Value++;
        try
        {
            await state.WriteStateAsync();
            return "ok";
        }
        catch (Exception e)
        {
            return e is global::Orleans.Storage.InconsistentStateException ? "InconsistentStateException:" + e.GetType().Name : "other:" + e;
        }
    }
}

public interface ITickerGrain : IGrainWithStringKey
{
    Task Start(TimeSpan period);
    Task Stop();
}

/// <summary>Records every reminder tick (the silos share this process, so a static log sees them all).</summary>
public sealed class TickerGrain(ILocalSiloDetails silo) : Grain, ITickerGrain, IRemindable
{
    public static readonly ConcurrentQueue<(string Grain, string Silo, DateTime At)> Ticks = new();

    public async Task Start(TimeSpan period) => await this.RegisterOrUpdateReminder("tick", TimeSpan.FromSeconds(1), period);

    public async Task Stop()
    {
        var r = await this.GetReminder("tick");
        if (r != null) await this.UnregisterReminder(r);
    }

    public Task ReceiveReminder(string reminderName, TickStatus status)
    {
        Ticks.Enqueue((this.GetPrimaryKeyString(), silo.SiloAddress.ToString(), DateTime.UtcNow));
        return Task.CompletedTask;
    }
}
