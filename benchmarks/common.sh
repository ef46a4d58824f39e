# Sourced by the benchmark scripts (needs ROOT, the checkout): what building the dev sets' graphs shares.
# The Python 3.11 docs FAQ (dev set 2) is built from Debian's python3.11-doc (`apt-get install python3.11-doc`).
FAQ_DOCS=/usr/share/doc/python3.11/html
FAQ_BASE_URL=https://docs.python.org/3.11/

python_faq() {  # OUT_DIR: OUT_DIR/python-faq (corpus/ and qa.jsonl), built once
  [ -d "$FAQ_DOCS/faq" ] || { echo "missing $FAQ_DOCS/faq: apt-get install python3.11-doc" >&2; exit 2; }
  [ -f "$1/python-faq/qa.jsonl" ] || "$ROOT/.venv/bin/python" -m neoweave.cli datasets sphinx-faq "$FAQ_DOCS" \
    --out "$1/python-faq" --base-url "$FAQ_BASE_URL" > /dev/null
}

timed() {  # TIME_FILE COMMAND...: run it, writing its wall seconds and peak memory to TIME_FILE
  /usr/bin/time -f "%e s %M KB" -o "$1" "${@:2}"
}
