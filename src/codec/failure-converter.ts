// The failure converter used when encryption is on: error messages and stack traces move into a Payload
// (`encodedAttributes`) that the codec encrypts; the Failure keeps only "Encoded failure". Loaded by path
// (DataConverter.failureConverterPath) by the worker and bundled into the workflow sandbox, so it imports nothing else.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
