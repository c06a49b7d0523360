// The `desktop` section of the configuration: the desktop environment's sessions, sandbox network, apps, typing,
// commands and the endpoints its agent uses.
import { z } from 'zod';
import { checkSlotKeys, oneSlotsField } from './config-slots';

const DEFAULT_DESKTOP_SLOTS = 4;

/** The desktop environment (src/desktop): one Xvfb display and bubblewrap sandbox per session. */
export const DesktopSchema = z
  .strictObject({
    /** At most this many desktops at once on this worker (each is an X server plus its apps); absent: 4. */
    slots: z.number().int().min(0).max(64).optional(),
    /** `slots` by its wire name, kept so existing config files keep working (config-slots.ts). */
    maxSessions: z.number().int().min(0).max(64).optional(),
    /**
     * A desktop no activity used for this long is closed, freeing its slot (one whose task ended without closing
     * it, or that a lost activity left behind); its task, if it comes back, gets a new desktop with the same home.
     */
    idleTimeoutSeconds: z.number().positive().default(600),
    /**
     * What sandboxed programs may reach. false (default): nothing — the sandbox has its own empty network namespace.
     * 'policy': the same empty namespace, and one way out: an HTTP(S) proxy (the sandbox's http_proxy & co.) that
     * applies `urlPolicy` narrowed by the task's to every connection. true: the host's network, with no policy —
     * including services on the worker's localhost.
     */
    network: z.union([z.boolean(), z.literal('policy')]).default(false),
    /** Programs started on each new desktop (in its sandbox, in the background). */
    apps: z.array(z.string().min(1)).default(['xterm']),
    /** type_text types in chunks of this many characters, with this many milliseconds between keys. */
    typingChunk: z.number().int().min(1).max(1000).default(50),
    typingDelayMs: z.number().int().min(0).max(1000).default(12),
    /** run_command's timeout when the model gives none (the seed's 5 s), and the most a call may ask for. */
    commandTimeoutSeconds: z.number().positive().default(5),
    maxCommandTimeoutSeconds: z.number().positive().default(120),
    /** A command's output keeps this many characters from its start and from its end. */
    outputHeadChars: z.number().int().min(100).default(2000),
    outputTailChars: z.number().int().min(100).default(2000),
    /** The host uid/gid a root worker runs each sandbox as (never 0); absent: DEFAULT_SANDBOX_HOST_UID (61000). */
    sandboxUid: z.number().int().min(1).max(4294967294).optional(),
    /**
     * An output that calls no tool ends the task with its text as the answer (true, default: with native function
     * calling, plain text is the model's last word). false: it is an invalid output the model is told about. An
     * empty output, or one that looks like a call that could not be read, is an invalid output either way.
     */
    endOnNoCall: z.boolean().default(true),
    /** The endpoint (a name in `models`) that describes the screen; absent: the task's endpoint. */
    visionEndpoint: z.string().min(1).optional(),
    /** The endpoint (a name in `models`) that points at an element described in words; absent: the vision one. */
    groundingEndpoint: z.string().min(1).optional(),
  })
  .superRefine(checkSlotKeys)
  .transform((desktop) => oneSlotsField(desktop, DEFAULT_DESKTOP_SLOTS))
  .default({
    slots: DEFAULT_DESKTOP_SLOTS,
    idleTimeoutSeconds: 600,
    network: false,
    apps: ['xterm'],
    typingChunk: 50,
    typingDelayMs: 12,
    commandTimeoutSeconds: 5,
    maxCommandTimeoutSeconds: 120,
    outputHeadChars: 2000,
    outputTailChars: 2000,
    endOnNoCall: true,
  });
