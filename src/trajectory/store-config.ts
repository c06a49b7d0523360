// The worker config's `store` section: where run folders are kept. Beside the stores it configures (in trajectory,
// below the config that reads it), so opening a store needs no config module.
import { z } from 'zod';
import { DEFAULT_STORE_FAULT_WAIT_MINUTES, MAX_STORE_FAULT_WAIT_MINUTES } from './store-wait';

/**
 * Where run folders are kept (the `RunStore` seam, src/trajectory/store.ts). `folder` (default): under `runsDir`.
 * `s3`: an S3-compatible bucket (AWS S3, MinIO, `rclone serve s3`) shared by workers on several machines; the keys
 * are read from the environment variables named here, so the file never holds them. `faultWaitMinutes`: how long a
 * task waits for a store that is full, read-only or unreachable (src/trajectory/store-faults.ts) before it ends with
 * end reason `run_folder`; 0 ends it at the first such failure.
 */
const faultWaitMinutes = z.number().min(0).max(MAX_STORE_FAULT_WAIT_MINUTES).default(DEFAULT_STORE_FAULT_WAIT_MINUTES);
export const StoreSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('folder'), faultWaitMinutes }),
  z.strictObject({
    kind: z.literal('s3'),
    faultWaitMinutes,
    /** Absent: AWS S3 itself. */
    endpoint: z.url().optional(),
    bucket: z.string().min(1),
    /** Keys start with `<prefix>/` (no leading or trailing '/'); empty: the bucket's root. */
    prefix: z
      .string()
      .regex(/^([^/]+(\/[^/]+)*)?$/, 'a key prefix without leading or trailing /')
      .default(''),
    region: z.string().min(1).default('us-east-1'),
    accessKeyIdEnv: z.string().min(1).default('AWS_ACCESS_KEY_ID'),
    secretAccessKeyEnv: z.string().min(1).default('AWS_SECRET_ACCESS_KEY'),
    /** Path-style URLs (`endpoint/bucket/key`): what MinIO and rclone serve; AWS uses virtual hosts. */
    forcePathStyle: z.boolean().default(true),
  }),
]);
export type StoreConfig = z.infer<typeof StoreSchema>;
