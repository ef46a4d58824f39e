"""The link annotations of a PDF and where they point: a page of the file (with the position on it), another
file, or a URL. Damaged annotations are passed over: one bad link loses that link, not the document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

Target = tuple  # ("page", page index or None, top or None) | ("url", absolute url, anchor or None)


def number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def link_annotations(reader: Any, page_url: str) -> Iterator[tuple[int, list[float], Target]]:
    """(page index, rectangle, target) of every link annotation, page by page."""
    try:
        pages = {page.indirect_reference.idnum: index for index, page in enumerate(reader.pages)
                 if page.indirect_reference is not None}
    except Exception:
        return
    named: dict[str, Any] | None = None
    for index, page in enumerate(reader.pages):
        try:
            annotations = [a.get_object() for a in (page.get("/Annots") or [])]
        except Exception:
            continue
        for annotation in annotations:
            try:
                if annotation.get("/Subtype") != "/Link":
                    continue
                target = _target(annotation, pages, page_url)
                if target is not None and target[0] == "named":
                    named = _named_destinations(reader) if named is None else named
                    name = target[1].lstrip("/")
                    destination = named.get(name) or named.get(f"/{name}")
                    target = None if destination is None else (
                        "page", reader.get_destination_page_number(destination), number(destination.top))
                if target is not None:
                    yield index, [float(v) for v in annotation["/Rect"]], target
            except Exception:
                continue


def _named_destinations(reader: Any) -> dict[str, Any]:
    try:
        return dict(reader.named_destinations)
    except Exception:
        return {}


def _target(annotation: Any, pages: dict[int, int], page_url: str) -> tuple | None:
    """("page", index, top), ("named", name) or ("url", absolute url, anchor or None) of a link annotation."""
    action = annotation.get("/A")
    action = action.get_object() if action is not None else None
    if action is None:
        destination = annotation.get("/Dest")
    elif action.get("/S") == "/URI":
        uri = str(action.get("/URI") or "").strip()
        if not uri or uri.startswith(("mailto:", "javascript:", "tel:")):
            return None
        return "url", urljoin(page_url, uri), None
    elif action.get("/S") == "/GoToR":
        spec = action.get("/F")
        spec = spec.get_object() if spec is not None else None
        name = str(spec.get("/UF") or spec.get("/F") or "") if hasattr(spec, "get") else str(spec or "")
        if not name:
            return None
        remote = action.get("/D")
        remote = remote.get_object() if remote is not None else None
        page = number(remote[0]) if isinstance(remote, list) and remote else None
        return "url", urljoin(page_url, name), f"page={int(page) + 1}" if page is not None else None
    elif action.get("/S") == "/GoTo":
        destination = action.get("/D")
    else:
        return None
    destination = destination.get_object() if destination is not None else None
    if isinstance(destination, dict) and "/D" in destination:
        destination = destination["/D"]
    if isinstance(destination, str | bytes):
        return "named", destination.decode("latin-1") if isinstance(destination, bytes) else str(destination)
    if not isinstance(destination, list) or not destination:
        return None
    page_ref = destination[0]
    # a page number where a page reference belongs: some writers do this
    page = int(page_ref) if isinstance(page_ref, int) else pages.get(getattr(page_ref, "idnum", None))
    fit = str(destination[1]) if len(destination) > 1 else ""
    top = None
    if fit == "/XYZ" and len(destination) > 3:
        top = number(destination[3])
    elif fit in ("/FitH", "/FitBH") and len(destination) > 2:
        top = number(destination[2])
    return "page", page, top
