// Routing settings for tests about a single provider answer (its error's shape, status, headers):
// the gateway's default retries would wait out a 429's retry-after or a 5xx's backoff first.
import { DEFAULT_ROUTING, type RoutingSettings } from '../../src/daemon/routing/settings.js';

export const NO_RETRIES: RoutingSettings = { ...DEFAULT_ROUTING, retries: 0 };
