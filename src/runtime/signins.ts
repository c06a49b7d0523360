// The sign-in store of a configuration: the run store it names, sealed with its payload codec's key when encryption
// is on. What the CLI, the console and the worker's activities open (src/trajectory/signins.ts is the store).
import { sealerFor } from '../codec/sealed';
import type { RunStore } from '../trajectory/store';
import { SigninStore } from '../trajectory/signins';
import type { Config } from './config';

export function signinStoreFor(config: Pick<Config, 'encryption'>, store: RunStore): SigninStore {
  return new SigninStore(store, sealerFor(config));
}
