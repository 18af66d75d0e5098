"""What instructor sends for the README's invoice, against a stand-in of the
Messages API on 127.0.0.1: a first attempt whose answer misses the delivery
line (the sum check fails once) and the correction. Prints the bytes of each
request and of each of its blocks (the same breakdown as
`benches/request_blocks.py` gives for this project's requests).

    python3 -m venv /tmp/iv && /tmp/iv/bin/pip install instructor==1.17.0 anthropic
    /tmp/iv/bin/python benches/instructor_bytes.py [OUT_DIR]

With OUT_DIR, the two bodies are written there as instructor-1.json and
instructor-2.json. Nothing leaves 127.0.0.1.
"""

import json
import sys
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

import instructor
from anthropic import Anthropic
from pydantic import BaseModel, Field, model_validator

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from request_blocks import blocks  # noqa: E402

# The document of tests/extraction/request_bytes.rs, byte for byte.
DOCUMENT = (
    "INVOICE INV-2024-0117\nIssued: 2026-03-01\nDue: 2026-03-31\n\n"
    "Ergonomic chairs (3)         150.00\nStanding desks (2)           300.00\n"
    "Delivery                      50.00\n\nTOTAL DUE                    500.00 EUR"
)

FIRST = {
    "invoice_number": "INV-2024-0117", "issue_date": "2026-03-01", "due_date": "2026-03-31",
    "line_items": [{"description": "Ergonomic chairs (3)", "amount": 150.0},
                   {"description": "Standing desks (2)", "amount": 300.0}],
    "total": 500.0,
}
CORRECTED = json.loads(json.dumps(FIRST))
CORRECTED["line_items"].append({"description": "Delivery", "amount": 50.0})


class LineItem(BaseModel):
    description: str
    amount: float = Field(ge=0)


class Invoice(BaseModel):
    """Record one invoice exactly as printed."""

    invoice_number: str = Field(description="Invoice number exactly as printed.")
    issue_date: date
    due_date: Optional[date] = None
    line_items: list[LineItem]
    total: float

    @model_validator(mode="after")
    def sums(self):
        total = sum(item.amount for item in self.line_items)
        if abs(total - self.total) > 0.01:
            raise ValueError(
                f"check failed: sum(line_items.amount) == total (tolerance 0.01): "
                f"sum(line_items.amount) = {total:.2f}, total = {self.total:.2f}"
            )
        return self


bodies = []
replies = [FIRST, CORRECTED]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        bodies.append(body)
        answer = replies[min(len(bodies), len(replies)) - 1]
        reply = json.dumps({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
            "content": [{"type": "tool_use", "id": f"toolu_{len(bodies)}", "name": "Invoice", "input": answer}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    client = instructor.from_anthropic(Anthropic(api_key="test-key", base_url=base, max_retries=0))
    invoice = client.messages.create(
        model="claude-haiku-5-5",
        max_tokens=8192,
        max_retries=2,
        messages=[{"role": "user", "content": DOCUMENT}],
        response_model=Invoice,
    )
    server.shutdown()
    assert len(invoice.line_items) == 3 and len(bodies) == 2, (invoice, len(bodies))
    out = sys.argv[1] if len(sys.argv) > 1 else None
    for i, (name, body) in enumerate(zip(["first attempt", "correction"], bodies), 1):
        print(f"instructor {instructor.__version__}, {name}: {len(body)} bytes")
        for block, size in blocks(json.loads(body)):
            print(f"  {block}: {size}")
        if out:
            with open(f"{out}/instructor-{i}.json", "wb") as f:
                f.write(body)


if __name__ == "__main__":
    main()
