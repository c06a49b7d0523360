"""A Temporal Python payload codec that reads and writes cua's encrypted payloads (src/codec/aes-gcm-codec.ts).

The format: each payload becomes
    metadata {"encoding": "binary/encrypted", "encryption-key-id": <key id>, "encryption-cipher": "aes-256-gcm"}
    data     = 12-byte IV || AES-256-GCM ciphertext || 16-byte tag
where the plaintext is the original Payload (metadata included) serialized as protobuf
(temporal.api.common.v1.Payload), with no associated data. Keys are 32 bytes, base64, named by an id; the same
environment variables as a cua client or worker name them:
    CUA_ENCRYPTION_KEYS="k2:BASE64,k1:BASE64"   (the first encrypts, all decrypt)
    CUA_ENCRYPTION_KEY=BASE64                   (one key, id "env")
Plaintext payloads (from tasks started without a codec) are passed through on decode.

Needs `cryptography` (pip install cryptography) beside `temporalio`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from typing import Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
import temporalio.converter
from temporalio.api.common.v1 import Payload

ENCRYPTED_ENCODING = b"binary/encrypted"
KEY_ID_METADATA = "encryption-key-id"
CIPHER_METADATA = "encryption-cipher"
CIPHER = b"aes-256-gcm"
IV_BYTES = 12
TAG_BYTES = 16


class CodecKeyError(Exception):
    """The keys in the environment are missing or malformed, or a payload names a key we do not have."""


def decode_key(text: str) -> bytes:
    """A base64 or base64url key of exactly 32 bytes (like `openssl rand -base64 32`)."""
    t = text.strip().replace("-", "+").replace("_", "/")
    try:
        key = base64.b64decode(t + "=" * (-len(t) % 4), validate=True)
    except binascii.Error:
        raise CodecKeyError("an encryption key is not base64; make one with `openssl rand -base64 32`") from None
    if len(key) != 32:
        raise CodecKeyError(f"an encryption key must be the base64 of 32 bytes, got {len(key)} bytes")
    return key


def keys_from_env(env: Mapping[str, str] = os.environ) -> list[tuple[str, bytes]] | None:
    """[(id, key), ...] from CUA_ENCRYPTION_KEYS or CUA_ENCRYPTION_KEY, the first one active; None when unset."""
    listed, single = env.get("CUA_ENCRYPTION_KEYS"), env.get("CUA_ENCRYPTION_KEY")
    if listed and single:
        raise CodecKeyError("set CUA_ENCRYPTION_KEYS or CUA_ENCRYPTION_KEY, not both")
    if single:
        return [("env", decode_key(single))]
    if not listed:
        return None
    keys = []
    for i, entry in enumerate(listed.split(",")):
        key_id, sep, text = entry.partition(":")
        if not sep or not key_id.strip():
            raise CodecKeyError(f"CUA_ENCRYPTION_KEYS entry {i + 1} must be id:base64key")
        keys.append((key_id.strip(), decode_key(text)))
    return keys


class AesGcmCodec(temporalio.converter.PayloadCodec):
    def __init__(self, keys: Sequence[tuple[str, bytes]]) -> None:
        if not keys:
            raise CodecKeyError("the codec needs at least one key")
        self._active_id, active = keys[0]
        self._active = AESGCM(active)
        self._by_id = {key_id: AESGCM(key) for key_id, key in keys}

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._decrypt(p) for p in payloads]

    def _encrypt(self, payload: Payload) -> Payload:
        iv = os.urandom(IV_BYTES)
        sealed = self._active.encrypt(iv, payload.SerializeToString(), None)  # ciphertext || tag
        return Payload(
            metadata={
                "encoding": ENCRYPTED_ENCODING,
                KEY_ID_METADATA: self._active_id.encode(),
                CIPHER_METADATA: CIPHER,
            },
            data=iv + sealed,
        )

    def _decrypt(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCRYPTED_ENCODING:
            return payload
        key_id = payload.metadata.get(KEY_ID_METADATA, b"(none)").decode()
        aes = self._by_id.get(key_id)
        if aes is None:
            raise CodecKeyError(f"payload encrypted with key id '{key_id}', which is not configured")
        if len(payload.data) < IV_BYTES + TAG_BYTES:
            raise CodecKeyError(f"payload encrypted with key id '{key_id}' is truncated")
        try:
            plain = aes.decrypt(payload.data[:IV_BYTES], payload.data[IV_BYTES:], None)
        except InvalidTag:
            raise CodecKeyError(f"payload encrypted with key id '{key_id}' does not authenticate") from None
        return Payload.FromString(plain)


def data_converter(keys: Sequence[tuple[str, bytes]]) -> temporalio.converter.DataConverter:
    """The default JSON converter plus our codec; failure messages travel encrypted too, as cua workers send them."""
    return dataclasses.replace(
        temporalio.converter.default(),
        payload_codec=AesGcmCodec(keys),
        failure_converter_class=temporalio.converter.DefaultFailureConverterWithEncodedAttributes,
    )
