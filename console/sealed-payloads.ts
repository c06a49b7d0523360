// The console's payload converter: the SDK's default one, plus
// payloads still encrypted after the codec — no key for them here — read as ENCRYPTED_PLACEHOLDER instead of failing.
// So a console without the key lists a task (its memo, its status) and shows the placeholder, never the ciphertext.
import {
  BinaryPayloadConverter,
  CompositePayloadConverter,
  JsonPayloadConverter,
  UndefinedPayloadConverter,
} from '@temporalio/common';
import type { Payload, PayloadConverterWithEncoding } from '@temporalio/common';
import { ENCRYPTED_ENCODING } from '../src/codec/aes-gcm-codec';

/** What the console shows for a payload it has no key for. */
export const ENCRYPTED_PLACEHOLDER = 'encrypted — no key';

class SealedPayloadConverter implements PayloadConverterWithEncoding {
  readonly encodingType = ENCRYPTED_ENCODING;
  toPayload(): Payload | undefined {
    return undefined;
  }
  fromPayload<T>(): T {
    return ENCRYPTED_PLACEHOLDER as T;
  }
}

export const payloadConverter = new CompositePayloadConverter(
  new UndefinedPayloadConverter(),
  new BinaryPayloadConverter(),
  new JsonPayloadConverter(),
  new SealedPayloadConverter(),
);
