"""The bytes of each block of a Messages API request body, written compactly
(no spaces, UTF-8), so two clients' requests compare block by block
whatever whitespace their JSON writers use.

    python3 benches/request_blocks.py BODY.json...
"""

import json
import sys


def size(value):
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def blocks(body):
    """(block, bytes) pairs: each top-level field, and each content block of each message."""
    out = []
    for key, value in body.items():
        if key == "messages":
            for m, message in enumerate(value):
                content = message.get("content")
                if isinstance(content, list):
                    for c, part in enumerate(content):
                        kind = part.get("type", "?")
                        label = part.get("text", "")[:40].split("\n")[0] if kind == "text" else kind
                        out.append((f"messages[{m}] ({message['role']}) [{c}] {kind}: {label!r}", size(part)))
                else:
                    out.append((f"messages[{m}] ({message['role']}) text", size(content)))
        elif key == "tools":
            for t, tool in enumerate(value):
                out.append((f"tools[{t}] {tool.get('name')}", size(tool)))
        else:
            out.append((key, size(value)))
    out.append(("total, compact", size(body)))
    return out


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            raw = f.read()
        print(f"{path}: {len(raw)} bytes as sent")
        for block, n in blocks(json.loads(raw)):
            print(f"  {block}: {n}")
