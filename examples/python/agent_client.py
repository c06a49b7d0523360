#!/usr/bin/env python3
"""Drive a cua agent from Python with the official Temporal SDK (PyPI `temporalio`), no cua code involved.

Starts an `agentTask` workflow with JSON input, prints its steps (the `steps` query) while it runs, replies to each
question it asks (the `status` query shows it) with the `reply` update, and prints the result.

    python agent_client.py "Search hotels in the city I want." --url http://127.0.0.1:8500/ \
        --model-base-url http://127.0.0.1:8400/v1 --model ask-city --reply Lisbon

Exit code 0 when the task completes; 1 when it ends otherwise (failed, cancelled, out of steps), a reply is
rejected, or the server cannot be reached; 2 for bad arguments. Payloads are plain JSON unless CUA_ENCRYPTION_KEYS or
CUA_ENCRYPTION_KEY is set: then cua_codec.py encrypts them as cua clients and workers do (see README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import time
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError, CancelledError, TerminatedError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

# The contract, as src/contract/task.ts and workflows/messages.ts define it.
WORKFLOW = "agentTask"  # AGENT_WORKFLOW
DEFAULT_TASK_QUEUE = "cua-agent"  # DEFAULT_TASK_QUEUE
STATUS_QUERY = "status"  # -> TaskStatus
STEPS_QUERY = "steps"  # -> StepSummary[]
REPLY_UPDATE = "reply"  # ReplyInput {text, questionId?} -> {accepted: true, step}


class ClientError(Exception):
    """A one-line reason to stop, printed as `error: ...`."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Start a cua agent task from Python, reply to its questions, print its result.",
    )
    p.add_argument("instruction", help="what the agent should do")
    p.add_argument("--address", default=os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"))
    p.add_argument("--namespace", default=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    p.add_argument("--task-queue", default=os.environ.get("CUA_TASK_QUEUE", DEFAULT_TASK_QUEUE))
    p.add_argument("--id", help="the task id (= workflow id = run folder name); default: py-<time>-<random>")
    p.add_argument("--url", help="start URL (startUrl)")
    p.add_argument("--max-steps", type=int, help="step budget (maxSteps, default 30)")
    p.add_argument("--model-endpoint", default="default", help="endpoint name in the worker's config")
    p.add_argument("--model-base-url", help="override the endpoint's base URL (model.baseUrl)")
    p.add_argument("--model", help="override the endpoint's model name (model.model)")
    p.add_argument(
        "--input-json",
        default="{}",
        help="more TaskInput fields as a JSON object, merged over the ones above (see src/contract/task.ts)",
    )
    p.add_argument(
        "--reply",
        action="append",
        default=[],
        help="the reply to the agent's next question (repeat for several); without it, read from the terminal",
    )
    p.add_argument(
        "--question-id",
        help="reply to this question id instead of the pending one (shows how a stale reply is rejected)",
    )
    p.add_argument("--poll", type=float, default=0.3, help="seconds between status polls (default 0.3)")
    return p.parse_args(argv)


def task_input(args: argparse.Namespace, run_id: str) -> dict[str, Any]:
    """The workflow's one argument: a JSON object the worker validates against TaskInputSchema."""
    model: dict[str, Any] = {"endpoint": args.model_endpoint}
    if args.model_base_url:
        model["baseUrl"] = args.model_base_url
    if args.model:
        model["model"] = args.model
    data: dict[str, Any] = {"runId": run_id, "instruction": args.instruction, "model": model}
    if args.url:
        data["startUrl"] = args.url
    if args.max_steps is not None:
        data["maxSteps"] = args.max_steps
    try:
        extra = json.loads(args.input_json)
    except json.JSONDecodeError as err:
        raise ClientError(f"--input-json is not valid JSON: {err}") from None
    if not isinstance(extra, dict):
        raise ClientError("--input-json must be a JSON object")
    data.update(extra)
    return data


def step_line(s: dict[str, Any]) -> str:
    thoughts = " ".join(str(s.get("thoughts") or "").split())
    return f"step {s['step']:>3} · {s['summary']}" + (f"  — {thoughts[:90]}" if thoughts else "")


def next_reply(args: argparse.Namespace, question: str) -> str:
    if args.reply:
        return args.reply.pop(0)
    if not sys.stdin.isatty():
        raise ClientError(f"the agent asks {question!r} and no --reply is left for it")
    return input("Your reply: ").strip()


async def follow(handle: WorkflowHandle, args: argparse.Namespace) -> dict[str, Any]:
    """Prints new steps, replies to questions, and returns the task's result (a TaskResult dict) once it has ended."""
    printed = 0
    replied: set[str] = set()
    while True:
        # One call at a time, none left pending: the task's state (describe), then its steps and status (queries).
        running = (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
        try:
            steps = await handle.query(STEPS_QUERY)
            status = await handle.query(STATUS_QUERY)
        except (RPCError, WorkflowQueryFailedError):
            # Not answerable yet (no workflow task done) or after a failure: the result tells which.
            steps, status = [], {"status": "running"}
        for s in steps[printed:]:
            print(step_line(s), flush=True)
        printed = max(printed, len(steps))
        if not running:
            return await handle.result()  # raises WorkflowFailureError for a failed task
        question = status.get("question")
        # The workflow shows a question until it has recorded its reply: reply to each one once.
        if status["status"] == "waiting_for_user" and question and question["id"] not in replied:
            print(f"question {question['id']} (step {question['step']}): {question['text']}", flush=True)
            text = next_reply(args, question["text"])
            question_id = args.question_id or question["id"]
            try:
                accepted = await handle.execute_update(REPLY_UPDATE, {"text": text, "questionId": question_id})
            except WorkflowUpdateFailedError as err:
                raise ClientError(f"reply rejected: {root_message(err)}") from None
            replied.add(question["id"])
            print(f"replied to {question_id}: {text!r} (accepted at step {accepted['step']})", flush=True)
            continue
        await asyncio.sleep(args.poll)


def root_message(err: BaseException) -> str:
    while err.__cause__ is not None:
        err = err.__cause__
    return getattr(err, "message", None) or str(err)


def failed_result(err: WorkflowFailureError) -> dict[str, Any] | None:
    """A failed task carries its TaskResult ({status, endReason, error, ...}) as the failure's first detail."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.details and isinstance(cause.details[0], dict):
        return cause.details[0]
    return None


def encrypting_converter() -> dict[str, Any]:
    """With CUA_ENCRYPTION_KEYS or CUA_ENCRYPTION_KEY set: a data converter with cua's AES-GCM codec (cua_codec.py)."""
    if not (os.environ.get("CUA_ENCRYPTION_KEYS") or os.environ.get("CUA_ENCRYPTION_KEY")):
        return {}
    try:
        from cua_codec import CodecKeyError, data_converter, keys_from_env  # needs `cryptography`
    except ImportError as err:
        raise ClientError(f"payload encryption needs the `cryptography` package ({err})") from None
    try:
        keys = keys_from_env() or []
    except CodecKeyError as err:
        raise ClientError(str(err)) from None
    print(f"payload encryption on: new payloads use key '{keys[0][0]}'", flush=True)
    return {"data_converter": data_converter(keys)}


async def run(args: argparse.Namespace) -> int:
    run_id = args.id or f"py-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    data = task_input(args, run_id)
    converter = encrypting_converter()
    try:
        client = await Client.connect(args.address, namespace=args.namespace, **converter)
    except RuntimeError as err:  # the SDK's core raises RuntimeError for a failed connection
        raise ClientError(f"cannot connect to Temporal at {args.address}: {err}") from None
    try:
        handle = await client.start_workflow(
            WORKFLOW,
            data,
            id=run_id,
            task_queue=args.task_queue,
            static_summary=args.instruction[:400],  # the Temporal UI shows it, as for tasks `cua run` starts
        )
    except WorkflowAlreadyStartedError:
        raise ClientError(f"a task with id {run_id} already exists; choose another --id") from None
    print(f"started task {run_id} (workflow {WORKFLOW}, task queue {args.task_queue}, namespace {args.namespace})")
    try:
        result = await follow(handle, args)
    except WorkflowFailureError as err:
        failed = failed_result(err)
        if isinstance(err.cause, CancelledError):
            print(f"task {run_id}: cancelled", file=sys.stderr)
        elif isinstance(err.cause, TerminatedError):
            print(f"task {run_id}: terminated ({root_message(err)})", file=sys.stderr)
        elif failed:
            print(f"task {run_id}: failed ({failed['endReason']}): {failed['error']}", file=sys.stderr)
        else:
            print(f"task {run_id}: failed: {root_message(err)}", file=sys.stderr)
        return 1
    print(f"task {run_id}: {result['status']} after {result['steps']} step(s)")
    if result.get("answer") is not None:
        print(f"answer: {result['answer']}")
    if result["status"] != "complete":
        print(f"task {run_id}: ended ({result['endReason']}): {result.get('error')}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    args = parse_args(sys.argv[1:])
    try:
        return asyncio.run(run(args))
    except ClientError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except RPCError as err:
        print(f"error: Temporal refused the request: {err.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the task goes on; `npx cua status <id>` shows it", file=sys.stderr)
        return 130


if __name__ == "__main__":
    code = main()
    # Leave without interpreter teardown: the SDK's Rust core keeps threads that can crash a finalizing
    # interpreter (SIGSEGV/SIGABRT after all work is done; temporalio/sdk-python#300). Flush, then exit at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
