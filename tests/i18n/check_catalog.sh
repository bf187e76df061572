#!/usr/bin/env bash
# Catalog checks (issue #16): (1) every ts::tr()/TS_N_() msgid in the sources is in po/transformer-studio.pot;
# (2) every msgid of the sources has a translation in each po/<lang>.po; (3) no catalog has an untranslated or
# fuzzy entry and msgfmt --check accepts it (printf formats of msgid and msgstr agree).
# usage: check_catalog.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
mkdir -p "$work"
for t in xgettext msgcmp msgfmt; do
  command -v $t >/dev/null || { echo "check_catalog: $t not found (install gettext: bash .ci/deps.sh)"; exit 1; }
done
bash "$src/po/update.sh" --pot "$work/fresh.pot"
fail=0
n=$(grep -c '^msgid ' "$work/fresh.pot" || true)
echo "msgids in the sources: $((n - 1))"
if ! msgcmp --use-untranslated "$src/po/transformer-studio.pot" "$work/fresh.pot" 2>"$work/pot.err"; then
  echo "FAIL: msgids in the sources missing from po/transformer-studio.pot (run bash po/update.sh):"
  grep -v '^msgcmp: found' "$work/pot.err" | head -40
  fail=1
fi
while read -r lang; do
  case "$lang" in ''|'#'*) continue ;; esac
  po="$src/po/$lang.po"
  if ! msgcmp "$po" "$work/fresh.pot" 2>"$work/$lang.err"; then
    echo "FAIL: $lang.po lacks translations for msgids of the sources:"
    grep -v '^msgcmp: found' "$work/$lang.err" | head -40
    fail=1
  fi
  stats=$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$po" 2>&1) || { echo "FAIL: msgfmt --check $lang.po: $stats"; fail=1; }
  echo "$lang: $stats"
  if echo "$stats" | grep -Eq 'fuzzy|untranslated'; then
    echo "FAIL: $lang.po has fuzzy or untranslated entries:"
    msgattrib --only-fuzzy --no-obsolete "$po" | grep '^msgid' | head -20 || true
    msgattrib --untranslated --no-obsolete "$po" | grep '^msgid' | head -20 || true
    fail=1
  fi
done < "$src/po/LINGUAS"
[ $fail -eq 0 ] && echo "check_catalog: ok"
exit $fail
