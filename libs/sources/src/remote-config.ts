import { type HashqConfig, loadConfig, type RemoteSettings } from '@hashq/config';

import { NetGuard } from './net-guard';

/**
 * What the remote sources (HTTP and S3) need: the settings @hashq/config read and validated
 * (HTTP_*, S3_*; see RemoteSettings) and the SSRF guard of HASHQ_ALLOW_HOSTS.
 */
export interface RemoteConfig extends RemoteSettings {
  guard: NetGuard;
  /** A tenant's allowed_hosts (SourceFactory.withAllowedHosts); absent: any host the guard allows. */
  allowedHosts?: readonly string[];
}

/** The remote sources' configuration from the apps' validated configuration (defaults without one). */
export function remoteConfig(
  config: Pick<HashqConfig, 'remote' | 'allowHosts'> = loadConfig({}, { requireStateKeys: false }),
): RemoteConfig {
  return { ...config.remote, guard: new NetGuard(config.allowHosts) };
}
