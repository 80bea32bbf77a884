#!/usr/bin/env python3
"""Streams from an OpenAI-compatible server with the official client and
checks that the accumulated message equals the non-streaming answer.

Usage: server_check.py BASE_URL   (e.g. http://127.0.0.1:8080/v1)
Run with the venv python that tools/openai/setup.sh prints.
"""

import json
import sys

import openai


def main():
    client = openai.OpenAI(base_url=sys.argv[1], api_key="unused", timeout=30, max_retries=0)
    messages = [{"role": "user", "content": "What's the weather in Paris?"}]
    whole = client.chat.completions.create(model="retort", messages=messages, stream=False)
    want = whole.choices[0].message
    # The client's own accumulation of a stream (ChatCompletionStreamState).
    with client.chat.completions.stream(model="retort", messages=messages) as stream:
        deltas = 0
        for event in stream:
            if event.type == "tool_calls.function.arguments.delta":
                deltas += 1
        final = stream.get_final_completion()
    got = final.choices[0].message
    problems = []
    if got.content != want.content:
        problems.append(f"content {got.content!r} != {want.content!r}")
    if (got.model_extra or {}).get("reasoning_content") != (want.model_extra or {}).get("reasoning_content"):
        problems.append("reasoning_content differs")
    g, w = got.tool_calls or [], want.tool_calls or []
    if len(g) != len(w) or not w:
        problems.append(f"{len(g)} calls streamed, {len(w)} in the answer")
    for a, b in zip(g, w):
        if (a.type, a.function.name) != (b.type, b.function.name):
            problems.append(f"call {a.function.name} != {b.function.name}")
        if a.function.arguments != b.function.arguments or json.loads(a.function.arguments) != json.loads(b.function.arguments):
            problems.append(f"arguments {a.function.arguments!r} != {b.function.arguments!r}")
    if final.choices[0].finish_reason != whole.choices[0].finish_reason:
        problems.append(f"finish_reason {final.choices[0].finish_reason} != {whole.choices[0].finish_reason}")
    # Raw SSE as well: every line a chunk, the last `[DONE]`.
    raw = client.chat.completions.create(model="retort", messages=messages, stream=True)
    chunks = list(raw)
    if not chunks or chunks[-1].choices[0].finish_reason != whole.choices[0].finish_reason:
        problems.append("the raw stream does not end with the finish reason")
    # llama.cpp's `reasoning_format: none` per request: the reasoning comes
    # inline in the content, streamed and whole alike.
    none = {"reasoning_format": "none"}
    inline_whole = client.chat.completions.create(
        model="retort", messages=messages, stream=False, extra_body=none).choices[0].message
    with client.chat.completions.stream(model="retort", messages=messages, extra_body=none) as stream:
        for _ in stream:
            pass
        inline_got = stream.get_final_completion().choices[0].message
    reasoning = (want.model_extra or {}).get("reasoning_content")
    if inline_got.content != inline_whole.content:
        problems.append(f"inline content {inline_got.content!r} != {inline_whole.content!r}")
    if (inline_got.model_extra or {}).get("reasoning_content") or (inline_whole.model_extra or {}).get("reasoning_content"):
        problems.append("reasoning_content sent with reasoning_format none")
    if reasoning and reasoning not in (inline_whole.content or ""):
        problems.append(f"the reasoning {reasoning!r} is not inline in {inline_whole.content!r}")
    try:
        client.chat.completions.create(
            model="retort", messages=messages, stream=False, extra_body={"reasoning_format": "sideways"})
        problems.append("an unknown reasoning_format was accepted")
    except openai.BadRequestError:
        pass
    for p in problems:
        print("FAIL", p)
    print(f"openai {openai.__version__}: {len(g)} calls, {deltas} argument deltas, "
          f"{len(chunks)} chunks, {'ok' if not problems else 'FAILED'}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
