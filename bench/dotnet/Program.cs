// The SDK-level figures a .NET user sees: Azure.Data.Tables 12.13.0 against each target given with
// --target NAME=CONNECTION_STRING (bench/dotnet/run.sh starts tablestone and Azurite 3.35 and passes both),
// the same scenarios at 1 and 32 concurrent tasks, each for --seconds of wall time after a short warm-up:
//   insert      AddEntity, a new row each time (6 properties)
//   get         GetEntity of a random row among 1,000
//   upsert      UpsertEntity (Replace) of a random row among 1,000
//   batch100    SubmitTransaction of 100 Add actions in a new partition
//   drain10k    Query<TableEntity> of a 10,000-row table, every page drained (1,000 rows a page)
// Prints one Markdown table: operations per second, median and p99 latency per target, and each
// later target's throughput as a ratio of the first's (first / later: "x times faster").
using System.Diagnostics;
using Azure;
using Azure.Data.Tables;

var targets = new List<(string Name, string Cs)>();
var seconds = 5.0;
var concurrencies = new[] { 1, 32 };
for (var i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--target":
            var kv = args[++i].Split('=', 2);
            targets.Add((kv[0], kv[1]));
            break;
        case "--seconds": seconds = double.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture); break;
        case "--tasks": concurrencies = args[++i].Split(',').Select(int.Parse).ToArray(); break;
        default: Console.Error.WriteLine($"unknown argument {args[i]}"); return 2;
    }
}
if (targets.Count == 0) { Console.Error.WriteLine("usage: --target NAME=CS [--target ...] [--seconds S] [--tasks 1,32]"); return 2; }

var results = new Dictionary<(string Target, string Scenario, int Tasks), (double OpsPerSec, double P50, double P99)>();
var scenarios = new[] { "insert", "get", "upsert", "batch100", "drain10k" };
var filler = new string('x', 100);

TableEntity Row(string pk, string rk) => new(pk, rk)
{
    ["Name"] = "entity " + rk, ["Count"] = 42, ["Big"] = 1L << 40, ["Ratio"] = 0.5, ["When"] = DateTimeOffset.UtcNow, ["Pad"] = filler,
};

foreach (var (name, cs) in targets)
{
    var options = new TableClientOptions();
    options.Retry.MaxRetries = 0;
    var service = new TableServiceClient(cs, options);
    var run = Guid.NewGuid().ToString("N")[..6];
    TableClient Make(string what)
    {
        var t = service.GetTableClient($"b{what}{run}");
        t.Create();
        return t;
    }
    var seeded = Make("seed");
    for (var b = 0; b < 10; b++)
        seeded.SubmitTransaction(Enumerable.Range(0, 100).Select(j => new TableTransactionAction(TableTransactionActionType.Add, Row("p", $"{b * 100 + j:D5}"))));
    var drain = Make("drain");
    await Parallel.ForEachAsync(Enumerable.Range(0, 100), new ParallelOptions { MaxDegreeOfParallelism = 8 }, async (b, ct) =>
        await drain.SubmitTransactionAsync(Enumerable.Range(0, 100).Select(j => new TableTransactionAction(TableTransactionActionType.Add, Row($"d{b:D3}", $"{j:D3}"))), ct));
    Console.Error.WriteLine($"[{name}] seeded 1,000 + 10,000 rows");

    foreach (var tasks in concurrencies)
    {
        foreach (var scenario in scenarios)
        {
            var table = scenario is "insert" or "batch100" ? Make(scenario + tasks) : scenario == "drain10k" ? drain : seeded;
            long seq = 0;
            Func<int, Random, Task> op = scenario switch
            {
                "insert" => async (task, _) => await table.AddEntityAsync(Row($"t{task}", $"{Interlocked.Increment(ref seq):D10}")),
                "get" => async (_, rnd) => await table.GetEntityAsync<TableEntity>("p", $"{rnd.Next(1000):D5}"),
                "upsert" => async (_, rnd) => await table.UpsertEntityAsync(Row("p", $"{rnd.Next(1000):D5}"), TableUpdateMode.Replace),
                "batch100" => async (task, _) =>
                {
                    var pk = $"t{task}-{Interlocked.Increment(ref seq)}";
                    await table.SubmitTransactionAsync(Enumerable.Range(0, 100).Select(j => new TableTransactionAction(TableTransactionActionType.Add, Row(pk, $"{j:D3}"))));
                },
                _ => async (_, _) =>
                {
                    var n = 0;
                    await foreach (var page in table.QueryAsync<TableEntity>(maxPerPage: 1000).AsPages()) n += page.Values.Count;
                    if (n != 10000) throw new InvalidOperationException($"drained {n} rows, expected 10,000");
                },
            };
            // Warm-up (connections, JIT), then the measured run.
            await Measure(op, tasks, TimeSpan.FromSeconds(Math.Min(1.0, seconds / 5)));
            var (count, elapsed, lat) = await Measure(op, tasks, TimeSpan.FromSeconds(seconds));
            lat.Sort();
            var r = (count / elapsed, lat[lat.Count / 2], lat[Math.Min(lat.Count - 1, (int)(lat.Count * 0.99))]);
            results[(name, scenario, tasks)] = r;
            Console.Error.WriteLine($"[{name}] {scenario} x{tasks}: {r.Item1:F1} ops/s, p50 {r.Item2:F2} ms, p99 {r.Item3:F2} ms");
        }
    }
    foreach (var t in service.Query(filter: $"TableName ge 'b' and TableName lt 'c'").ToList())
        if (t.Name.EndsWith(run)) service.DeleteTable(t.Name);
}

Console.WriteLine($"| scenario | tasks | " + string.Join(" | ", targets.Select(t => $"{t.Name} ops/s (p50 / p99 ms)"))
    + (targets.Count > 1 ? " | " + string.Join(" | ", targets.Skip(1).Select(t => $"{targets[0].Name} / {t.Name}")) : "") + " |");
Console.WriteLine("|---|---:|" + string.Concat(targets.Select(_ => "---:|")) + string.Concat(targets.Skip(1).Select(_ => "---:|")));
foreach (var tasks in concurrencies)
    foreach (var scenario in scenarios)
    {
        var cells = targets.Select(t => results[(t.Name, scenario, tasks)]).ToList();
        Console.WriteLine($"| {scenario} | {tasks} | " + string.Join(" | ", cells.Select(c => $"{c.OpsPerSec:F1} ({c.P50:F2} / {c.P99:F2})"))
            + (cells.Count > 1 ? " | " + string.Join(" | ", cells.Skip(1).Select(c => $"{cells[0].OpsPerSec / c.OpsPerSec:F2}x")) : "") + " |");
    }
return 0;

static async Task<(long Count, double Seconds, List<double> LatenciesMs)> Measure(Func<int, Random, Task> op, int tasks, TimeSpan duration)
{
    var lat = new List<double>[tasks];
    var sw = Stopwatch.StartNew();
    var workers = Enumerable.Range(0, tasks).Select(async task =>
    {
        var mine = lat[task] = new List<double>();
        var rnd = new Random(task);
        await Task.Yield();
        while (sw.Elapsed < duration)
        {
            var t0 = Stopwatch.GetTimestamp();
            await op(task, rnd);
            mine.Add(Stopwatch.GetElapsedTime(t0).TotalMilliseconds);
        }
    }).ToArray();
    await Task.WhenAll(workers);
    var elapsed = sw.Elapsed.TotalSeconds;
    var all = lat.SelectMany(l => l).ToList();
    return (all.Count, elapsed, all);
}
