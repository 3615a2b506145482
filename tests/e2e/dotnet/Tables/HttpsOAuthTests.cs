using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Text.Json;
using Azure;
using Azure.Core;
using Azure.Core.Pipeline;
using Azure.Data.Tables;
using Xunit;

namespace Tablestone.E2E.Tables;

/// <summary>A TokenCredential returning a fixed JWT: a test double for DefaultAzureCredential.</summary>
public sealed class FixedTokenCredential(string token) : TokenCredential
{
    public List<string> Scopes { get; } = new();
    public override AccessToken GetToken(TokenRequestContext ctx, CancellationToken ct)
    {
        lock (Scopes) Scopes.AddRange(ctx.Scopes);
        return new AccessToken(token, DateTimeOffset.UtcNow.AddHours(1));
    }
    public override ValueTask<AccessToken> GetTokenAsync(TokenRequestContext ctx, CancellationToken ct) => new(GetToken(ctx, ct));

    /// <summary>A JWT tablestone's --oauth basic accepts: audience, issuer and lifetime checked, never the signature.</summary>
    public static string Jwt(string aud = "https://storage.azure.com", string iss = "https://sts.windows.net/tenant-1/", int expIn = 3600)
    {
        static string B64(object o) => Convert.ToBase64String(Encoding.UTF8.GetBytes(JsonSerializer.Serialize(o)))
            .TrimEnd('=').Replace('+', '-').Replace('/', '_');
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        return string.Join('.', B64(new { alg = "RS256", typ = "JWT" }),
            B64(new { aud, iss, tid = "tenant-1", nbf = now - 60, exp = now + expIn, oid = "00000000-0000-0000-0000-000000000001" }),
            "bm90LWEtc2lnbmF0dXJl");
    }
}

/// <summary>HTTPS with a self-signed certificate the client trusts explicitly (its own trust store holding
/// only that certificate, chain validated, host name checked), and --oauth basic with a TokenCredential.</summary>
public sealed class HttpsFixture : IDisposable
{
    public TablestoneServer Server { get; } = new(https: true, env: new Dictionary<string, string> { ["TABLESTONE_OAUTH"] = "basic" });
    public X509Certificate2 Cert { get; }
    public HttpsFixture() => Cert = X509CertificateLoader.LoadCertificateFromFile(Server.CertPath!);
    public void Dispose() => Server.Dispose();

    public TableClientOptions TrustingOptions(int retries = 0)
    {
        var o = Clients.Options(retries);
        var handler = new HttpClientHandler
        {
            ServerCertificateCustomValidationCallback = (_, cert, _, errors) =>
            {
                if (cert == null || (errors & ~SslPolicyErrors.RemoteCertificateChainErrors) != SslPolicyErrors.None) return false;
                using var chain = new X509Chain();
                chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
                chain.ChainPolicy.CustomTrustStore.Add(Cert);
                chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
                return chain.Build(cert);
            },
        };
        o.Transport = new HttpClientTransport(handler);
        return o;
    }
}

public class HttpsOAuthTests(HttpsFixture fx) : IClassFixture<HttpsFixture>
{
    private readonly TablestoneServer _s = fx.Server;

    [Fact]
    public void Https_WithAccountKey()
    {
        Assert.Equal("https", _s.Endpoint.Scheme);
        var service = new TableServiceClient(_s.ConnectionString, fx.TrustingOptions());
        var name = Names.Unique();
        service.CreateTable(name);
        var table = service.GetTableClient(name);
        table.AddEntity(new TableEntity("p", "r") { ["v"] = 1 });
        table.SubmitTransaction(new[] { new TableTransactionAction(TableTransactionActionType.UpsertReplace, new TableEntity("p", "s") { ["v"] = 2 }) });
        Assert.Equal(new[] { 1, 2 }, table.Query<TableEntity>().Select(e => e.GetInt32("v")!.Value));
        service.DeleteTable(name);
    }

    [Fact]
    public void Https_UntrustedCertificate_IsRefusedByTheClient()
    {
        var service = new TableServiceClient(_s.ConnectionString, Clients.Options(0));
        var e = Assert.Throws<RequestFailedException>(() => service.Query().ToList());
        Assert.Equal(0, e.Status);
        Assert.Contains("SSL", e.ToString(), StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void TokenCredential_WithAValidJwt()
    {
        var credential = new FixedTokenCredential(FixedTokenCredential.Jwt());
        var service = new TableServiceClient(_s.Endpoint, credential, fx.TrustingOptions());
        var name = Names.Unique();
        service.CreateTable(name);
        var table = new TableClient(_s.Endpoint, name, credential, fx.TrustingOptions());
        table.AddEntity(new TableEntity("p", "r") { ["v"] = 7 });
        Assert.Equal(7, table.GetEntity<TableEntity>("p", "r").Value.GetInt32("v"));
        table.SubmitTransaction(new[] { new TableTransactionAction(TableTransactionActionType.Delete, new TableEntity("p", "r")) });
        Assert.Empty(table.Query<TableEntity>());
        service.DeleteTable(name);
        Assert.NotEmpty(credential.Scopes);
        Assert.EndsWith("/.default", credential.Scopes[0]);
    }

    [Theory]
    [InlineData("expired")]
    [InlineData("audience")]
    [InlineData("issuer")]
    [InlineData("garbage")]
    public void RefusedTokens_Are401_InvalidAuthenticationInfo(string kind)
    {
        var token = kind switch
        {
            "expired" => FixedTokenCredential.Jwt(expIn: -3600),
            "audience" => FixedTokenCredential.Jwt(aud: "https://vault.azure.net"),
            "issuer" => FixedTokenCredential.Jwt(iss: "https://example.com/tenant-1/"),
            _ => "not.a.jwt",
        };
        var service = new TableServiceClient(_s.Endpoint, new FixedTokenCredential(token), fx.TrustingOptions());
        var e = Assert.Throws<RequestFailedException>(() => service.Query().ToList());
        Assert.Equal(401, e.Status);
        Assert.Equal("InvalidAuthenticationInfo", e.ErrorCode);
    }
}
