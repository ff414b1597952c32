import { NetGuard } from './net-guard.js';

/**
 * Settings of the remote sources (HTTP and S3), read from the environment:
 *   HASHQ_ALLOW_HOSTS        host names, addresses and CIDRs exempt from the SSRF guard (default: none)
 *   HTTP_CONNECT_TIMEOUT_MS  until the response headers arrive (default 15000)
 *   HTTP_IDLE_TIMEOUT_MS     longest silence of a connection while reading the body (default 30000)
 *   HTTP_MAX_REDIRECTS       redirects followed per request (default 5)
 *   S3_ENDPOINT              e.g. http://minio:9000 (default: AWS for the region)
 *   S3_REGION                default us-east-1 (or AWS_REGION)
 *   S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY / S3_SESSION_TOKEN  (default: the SDK's credential chain)
 *   S3_FORCE_PATH_STYLE      true for MinIO/Ceph-style endpoints (default false)
 *   S3_MAX_ATTEMPTS          SDK attempts per request, with its exponential backoff (default 4)
 */
export interface RemoteConfig {
  guard: NetGuard;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxRedirects: number;
  s3: {
    endpoint?: string;
    region: string;
    credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
    forcePathStyle: boolean;
    maxAttempts: number;
  };
}

type Env = Record<string, string | undefined>;

/**
 * `allowHosts`, when given, is the SSRF allow list as the apps' validated configuration holds it
 * (@hashq/config's HashqConfig.allowHosts); otherwise HASHQ_ALLOW_HOSTS is read from `env`.
 */
export function loadRemoteConfig(env: Env = process.env, allowHosts?: readonly string[]): RemoteConfig {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const text = env[name]?.trim();
    if (!text) return fallback;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${text}"`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string): boolean => /^(1|true|yes|on)$/i.test(env[name]?.trim() ?? '');
  let guard: NetGuard;
  try {
    guard = allowHosts ? new NetGuard(allowHosts) : NetGuard.fromEnv(env);
  } catch (err) {
    problems.push((err as Error).message);
    guard = new NetGuard();
  }
  const endpoint = env.S3_ENDPOINT?.trim() || undefined;
  if (endpoint) {
    try {
      const url = new URL(endpoint);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`S3_ENDPOINT must be http(s), got "${endpoint}"`);
    } catch {
      problems.push(`S3_ENDPOINT is not a valid URL: "${endpoint}"`);
    }
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY?.trim();
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together');
  }
  const config: RemoteConfig = {
    guard,
    connectTimeoutMs: int('HTTP_CONNECT_TIMEOUT_MS', 15000, 100, 600000),
    idleTimeoutMs: int('HTTP_IDLE_TIMEOUT_MS', 30000, 100, 600000),
    maxRedirects: int('HTTP_MAX_REDIRECTS', 5, 0, 20),
    s3: {
      endpoint,
      region: env.S3_REGION?.trim() || env.AWS_REGION?.trim() || 'us-east-1',
      credentials:
        accessKeyId && secretAccessKey
          ? { accessKeyId, secretAccessKey, sessionToken: env.S3_SESSION_TOKEN?.trim() || undefined }
          : undefined,
      forcePathStyle: bool('S3_FORCE_PATH_STYLE'),
      maxAttempts: int('S3_MAX_ATTEMPTS', 4, 1, 20),
    },
  };
  if (problems.length > 0) throw new Error(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return config;
}
