// The .NET suites' harness: starts the tablestone binary (TABLESTONE_BIN, else build/ or build-test/
// of the repository) on a free loopback port with a temporary data directory, waits for
// GET /_tablestone/health, and stops it with SIGTERM expecting exit code 0, as the Python and JS
// harnesses do (tests/e2e/python/harness.py).
//
// The host name the clients use: "127.0.0.1", or "localhost" when TABLESTONE_E2E_LOCALHOST=1 (the
// variable the Python, JS and legacy harnesses read too). With "localhost" on a port other than 10002 the Azure SDKs treat the endpoint as a
// Cosmos DB Table endpoint (the "localhost shape"); scripts/test.sh runs every suite in both shapes.
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using Xunit;

namespace Tablestone.E2E;

public sealed class TablestoneServer : IDisposable
{
    public const string Account = "devstoreaccount1";
    public const string Key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    private Process? _process;
    private readonly string _tmp;
    private readonly List<string> _args;
    private readonly Dictionary<string, string> _env;
    private string? _pidFile;

    public int Port { get; }
    public string Host { get; }
    public bool Https { get; }
    public string DataDir { get; }
    public string LogPath { get; }
    /// <summary>PEM certificate of an HTTPS server (null for HTTP).</summary>
    public string? CertPath { get; }

    public static string HostShape =>
        Environment.GetEnvironmentVariable("TABLESTONE_E2E_LOCALHOST") == "1" ? "localhost" : "127.0.0.1";

    public string Scheme => Https ? "https" : "http";
    public Uri Endpoint => new($"{Scheme}://{Host}:{Port}/{Account}");
    public Uri Root => new($"{Scheme}://{Host}:{Port}/");
    public string ConnectionString =>
        $"DefaultEndpointsProtocol={Scheme};AccountName={Account};AccountKey={Key};TableEndpoint={Endpoint};";

    /// <param name="extraArgs">Flags after the fixed ones (--tableHost 127.0.0.1 --tablePort P -l DIR -s).</param>
    /// <param name="env">Extra environment for the server process (TABLESTONE_OAUTH=basic, ...).</param>
    /// <param name="https">Serve HTTPS with a fresh self-signed certificate for 127.0.0.1 and localhost.</param>
    /// <param name="port">A fixed port (default: a free one).</param>
    public TablestoneServer(IEnumerable<string>? extraArgs = null, IDictionary<string, string>? env = null,
                            bool https = false, int? port = null, string? host = null)
    {
        _tmp = Directory.CreateTempSubdirectory("tablestone-e2e-dotnet.").FullName;
        DataDir = Path.Combine(_tmp, "data");
        Directory.CreateDirectory(DataDir);
        Port = port ?? FreePort();
        Host = host ?? HostShape;
        Https = https;
        LogPath = Path.Combine(_tmp, $"server-{Port}.log");
        _args = new List<string> { "--tableHost", "127.0.0.1", "--tablePort", Port.ToString(), "-l", DataDir, "-s" };
        if (extraArgs != null) _args.AddRange(extraArgs);
        _env = new Dictionary<string, string>(env ?? new Dictionary<string, string>());
        if (https)
        {
            CertPath = Path.Combine(_tmp, "cert.pem");
            var keyPath = Path.Combine(_tmp, "key.pem");
            MakeCertificate(CertPath, keyPath);
            _env["TABLESTONE_CERT"] = CertPath;
            _env["TABLESTONE_KEY"] = keyPath;
        }
        Start();
    }

    public static string BinaryPath()
    {
        var fromEnv = Environment.GetEnvironmentVariable("TABLESTONE_BIN");
        if (!string.IsNullOrEmpty(fromEnv)) return Path.GetFullPath(fromEnv);
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir != null && !File.Exists(Path.Combine(dir.FullName, "scripts", "test.sh"))) dir = dir.Parent;
        if (dir == null) throw new InvalidOperationException("set TABLESTONE_BIN: repository root not found");
        foreach (var build in new[] { "build", "build-test" })
        {
            var candidate = Path.Combine(dir.FullName, build, "server", "app", "tablestone");
            if (File.Exists(candidate)) return candidate;
        }
        throw new InvalidOperationException("tablestone binary not found under build/ or build-test/ (set TABLESTONE_BIN)");
    }

    public static int FreePort()
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }

    public void Start(double timeoutSeconds = 30)
    {
        var psi = new ProcessStartInfo(BinaryPath())
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (var a in _args) psi.ArgumentList.Add(a);
        foreach (var (k, v) in _env) psi.Environment[k] = v;
        var log = new StreamWriter(LogPath, append: true) { AutoFlush = true };
        var p = new Process { StartInfo = psi };
        p.OutputDataReceived += (_, e) => { if (e.Data != null) lock (log) log.WriteLine(e.Data); };
        p.ErrorDataReceived += (_, e) => { if (e.Data != null) lock (log) log.WriteLine(e.Data); };
        p.Start();
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        _process = p;
        var pidDir = Environment.GetEnvironmentVariable("TABLESTONE_E2E_PIDDIR");
        if (!string.IsNullOrEmpty(pidDir))
        {
            _pidFile = Path.Combine(pidDir, $"dotnet-{p.Id}.pid");
            File.WriteAllText(_pidFile, p.Id.ToString());
        }
        using var handler = new HttpClientHandler { ServerCertificateCustomValidationCallback = (_, _, _, _) => true };
        using var http = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(2) };
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed.TotalSeconds < timeoutSeconds)
        {
            if (p.HasExited)
                throw new InvalidOperationException($"tablestone exited early with code {p.ExitCode}; log:\n{LogTail()}");
            try
            {
                var r = http.GetAsync($"{Scheme}://127.0.0.1:{Port}/_tablestone/health").GetAwaiter().GetResult();
                if (r.StatusCode == HttpStatusCode.OK) return;
            }
            catch (HttpRequestException) { }
            catch (TaskCanceledException) { }
            Thread.Sleep(50);
        }
        Kill();
        throw new InvalidOperationException($"tablestone did not become healthy in {timeoutSeconds}s; log:\n{LogTail()}");
    }

    [DllImport("libc", SetLastError = true, EntryPoint = "kill")]
    private static extern int SysKill(int pid, int sig);

    /// <summary>SIGTERM and wait; the exit code, or null if it had to be killed.</summary>
    public int? Stop(double timeoutSeconds = 20)
    {
        var p = _process;
        if (p == null) return 0;
        _process = null;
        int? code = null;
        if (!p.HasExited) SysKill(p.Id, 15);
        if (p.WaitForExit(TimeSpan.FromSeconds(timeoutSeconds)))
        {
            p.WaitForExit();
            code = p.ExitCode;
        }
        else
        {
            p.Kill();
            p.WaitForExit();
        }
        DropPidFile();
        return code;
    }

    /// <summary>SIGKILL: a crash, no shutdown.</summary>
    public void Kill()
    {
        var p = _process;
        _process = null;
        if (p != null && !p.HasExited)
        {
            p.Kill();
            p.WaitForExit();
        }
        DropPidFile();
    }

    /// <summary>SIGTERM (asserting exit code 0), then start again on the same data directory and port.</summary>
    public void Restart()
    {
        var code = Stop();
        if (code != 0) throw new InvalidOperationException($"tablestone exit code on SIGTERM was {code}; log:\n{LogTail()}");
        Start();
    }

    private void DropPidFile()
    {
        if (_pidFile != null && File.Exists(_pidFile)) File.Delete(_pidFile);
        _pidFile = null;
    }

    public string LogTail(int n = 4000)
    {
        try
        {
            using var fs = new FileStream(LogPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            using var reader = new StreamReader(fs);
            var text = reader.ReadToEnd();
            return text.Length > n ? text[^n..] : text;
        }
        catch (IOException) { return "(no log)"; }
    }

    public void Dispose()
    {
        var code = Stop();
        try { Directory.Delete(_tmp, recursive: true); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        if (code != 0) throw new InvalidOperationException($"tablestone did not exit with 0 on SIGTERM (got {code})");
    }

    private static void MakeCertificate(string certPath, string keyPath)
    {
        var psi = new ProcessStartInfo("openssl") { RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (var a in new[] { "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyPath, "-out", certPath,
                                  "-days", "1", "-subj", "/CN=127.0.0.1",
                                  "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost" })
            psi.ArgumentList.Add(a);
        using var p = Process.Start(psi)!;
        var err = p.StandardError.ReadToEnd();
        p.WaitForExit();
        if (p.ExitCode != 0) throw new InvalidOperationException("openssl failed: " + err);
    }

    /// <summary>A signed request to /_tablestone/{op} (the admin routes: needs --adminApi). The
    /// admin signature (docs/admin-api.md, "Authentication") covers the query and the body's SHA-256:
    /// VERB, Content-Type, x-ms-date, x-ms-content-sha256 and the resource with one line per query
    /// parameter, lower-cased names in order. Returns (status, body).</summary>
    public async Task<(HttpStatusCode Status, string Body)> AdminAsync(HttpMethod method, string op, string? json = null)
    {
        var path = "/_tablestone/" + op;
        var date = DateTime.UtcNow.ToString("R");
        var ctype = json != null ? "application/json" : "";
        var digest = Convert.ToBase64String(SHA256.HashData(Encoding.UTF8.GetBytes(json ?? "")));
        var parts = path.Split('?', 2);
        var resource = new StringBuilder($"/{Account}{parts[0]}");
        if (parts.Length > 1)
        {
            var pairs = parts[1].Split('&', StringSplitOptions.RemoveEmptyEntries)
                .Select(p => p.Split('=', 2))
                .Select(kv => (Name: Uri.UnescapeDataString(kv[0]).ToLowerInvariant(),
                               Value: kv.Length > 1 ? Uri.UnescapeDataString(kv[1]) : ""))
                .OrderBy(p => p.Name, StringComparer.Ordinal).ThenBy(p => p.Value, StringComparer.Ordinal);
            string? last = null;
            foreach (var (name, value) in pairs)
            {
                resource.Append(name == last ? "," : "\n" + name + ":").Append(value);
                last = name;
            }
        }
        var toSign = $"{method.Method}\n{ctype}\n{date}\n{digest}\n{resource}";
        using var hmac = new HMACSHA256(Convert.FromBase64String(Key));
        var sig = Convert.ToBase64String(hmac.ComputeHash(Encoding.UTF8.GetBytes(toSign)));
        using var handler = new HttpClientHandler { ServerCertificateCustomValidationCallback = (_, _, _, _) => true };
        using var http = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(30) };
        var req = new HttpRequestMessage(method, $"{Scheme}://127.0.0.1:{Port}{path}");
        req.Headers.TryAddWithoutValidation("x-ms-date", date);
        req.Headers.TryAddWithoutValidation("x-ms-content-sha256", digest);
        req.Headers.TryAddWithoutValidation("Authorization", $"SharedKey {Account}:{sig}");
        if (json != null) req.Content = new StringContent(json, Encoding.UTF8, "application/json");
        if (json != null) req.Content!.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/json");
        var resp = await http.SendAsync(req);
        return (resp.StatusCode, await resp.Content.ReadAsStringAsync());
    }
}

/// <summary>One server for every test of an assembly's "server" collection (tests in it run one at a time).</summary>
public sealed class ServerFixture : IDisposable
{
    public TablestoneServer Server { get; } = new();
    public void Dispose() => Server.Dispose();
}

public static class Names
{
    private static int _counter;
    public static string Unique(string prefix = "t") =>
        prefix + Guid.NewGuid().ToString("N")[..10] + Interlocked.Increment(ref _counter);
}

[CollectionDefinition("server")]
public sealed class ServerCollection : ICollectionFixture<ServerFixture> { }
