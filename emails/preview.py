"""Write every sample message to a folder, to look at: ``python -m emails.preview OUT``.

For each sample (``emails/samples.py``): ``<name>.txt`` (the plain-text part), ``<name>.html`` (the HTML
part, its ``cid:`` pictures pointing at files beside it, so a browser shows them) and ``<name>.eml`` (the
whole mail, for a mail client). A headless browser can then take screenshots::

    chromium --headless --no-sandbox --disable-gpu --window-size=700,1400 \\
        --screenshot=OUT/your_turn.png file://$PWD/OUT/your_turn.html
"""

from __future__ import annotations

import sys
from pathlib import Path

from .compose import Envelope, compose, to_bytes
from .samples import ALL


def write_previews(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, sample in ALL.items():
        rendered = sample.render()
        html = rendered.html
        for cid, data in rendered.images.items():
            picture = out / f"{name}-{cid.split('@')[0]}.png"
            picture.write_bytes(data)
            html = html.replace(f"cid:{cid}", picture.name)
        (out / f"{name}.html").write_text(html, encoding="utf-8")
        (out / f"{name}.txt").write_text(rendered.text, encoding="utf-8")
        envelope = Envelope(
            message_id=f"<sample-{name}@smallworld.invalid>",
            to="bob@example.org",
            to_name=sample.context.get("player_name"),
            sender="Small World by Mail <smallworld@smallworld.example>",
            date=sample.now,
            thread_id="<game-17.20260301093005000000@smallworld.invalid>",
            unsubscribe_url=sample.unsubscribe_url,
        )
        (out / f"{name}.eml").write_bytes(to_bytes(compose(rendered, envelope)))
        written.append(out / f"{name}.html")
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m emails.preview OUT_FOLDER", file=sys.stderr)
        return 2
    for path in write_previews(Path(argv[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
