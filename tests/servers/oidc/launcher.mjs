// A real OAuth authorization server for Portico's tests: oidc-provider on 127.0.0.1.
//
// Settings come from the JSON in the OIDC_SETTINGS environment variable:
//   port           listen port (0: any free port)
//   resources      MCP resource URLs whose tokens are JWTs (audience = the resource)
//   accessTtl      access token lifetime in seconds (default 600)
//   refreshTtl     refresh token lifetime in seconds (default 86400)
//   deviceTtl      device code lifetime in seconds (default 600)
//   clients        pre-registered clients (oidc-provider client metadata), e.g. the
//                  client_credentials clients of the machine-to-machine tests
// Prints "READY <issuer>" once listening.
import Provider from '../../peers/node_modules/oidc-provider/lib/index.js';
import http from 'node:http';

const settings = JSON.parse(process.env.OIDC_SETTINGS || '{}');
const accessTtl = settings.accessTtl ?? 600;
const refreshTtl = settings.refreshTtl ?? 86400;
const resources = new Set(settings.resources || []);

const server = http.createServer();
await new Promise((resolve) => server.listen(settings.port || 0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: settings.clients || [],
  cookies: { keys: ['portico-test-cookie-key'] },
  scopes: ['openid', 'offline_access', 'mcp'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    deviceFlow: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resourceIndicator) => {
        if (!resources.has(resourceIndicator)) {
          throw new Provider.errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        }
        return {
          scope: 'mcp',
          audience: resourceIndicator,
          accessTokenTTL: accessTtl,
          accessTokenFormat: 'jwt',
        };
      },
    },
  },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: {
    AccessToken: accessTtl,
    RefreshToken: refreshTtl,
    DeviceCode: settings.deviceTtl ?? 600,
    Interaction: 600,
    Session: 3600,
    Grant: 86400,
    AuthorizationCode: 120,
  },
  // The default loopback-free renderer is fine; keep errors readable in test logs.
  renderError: async (ctx, out) => {
    ctx.type = 'html';
    ctx.body = `<html><body><h1>oops</h1><pre>${JSON.stringify(out)}</pre></body></html>`;
  },
});
provider.on('server_error', (_ctx, err) => console.error('server_error', err));

server.on('request', provider.callback());
console.log(`READY ${issuer}`);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
