#!/usr/bin/env bash
# Translators' helper: re-extracts every ts::tr() / TS_N_() string from the app's sources into
# po/transformer-studio.pot (xgettext), then merges the new template into each po/<lang>.po (msgmerge), keeping
# existing translations and marking changed ones fuzzy. Translate the empty and fuzzy entries afterwards (remove
# the "#, fuzzy" line once checked); tests/i18n/check_catalog.sh fails while any remain.
#   bash po/update.sh            update the template and every catalog
#   bash po/update.sh --pot OUT  only write the template to OUT (the check script uses this)
set -euo pipefail
cd "$(dirname "$0")/.."
pot=po/transformer-studio.pot
if [ "${1:-}" = "--pot" ]; then pot=$2; fi
# Every C++ file of the app (the window, panels, figures, plot writers, session; files added to git are seen).
mapfile -t srcs < <(git ls-files 'app/*.cpp' 'app/*.h' 2>/dev/null || true)
if [ ${#srcs[@]} -eq 0 ]; then  # not a git checkout (a source tarball): every file under app/
  mapfile -t srcs < <(find app \( -name '*.cpp' -o -name '*.h' \) | sort)
fi
xgettext --from-code=UTF-8 --language=C++ --keyword --keyword=tr --keyword=trf --keyword=TS_N_ --sort-output --add-location=file \
         --package-name=transformer-studio \
         --copyright-holder="Transformer Studio authors" --output="$pot" "${srcs[@]}"
# The creation date changes on every run; drop it so an unchanged template stays unchanged in git.
sed -i '/^"POT-Creation-Date: /d' "$pot"
if [ "${1:-}" = "--pot" ]; then exit 0; fi
while read -r lang; do
  case "$lang" in ''|'#'*) continue ;; esac
  po=po/$lang.po
  if [ -f "$po" ]; then
    msgmerge --quiet --update --backup=none --sort-output --add-location=file "$po" "$pot"
  else
    msginit --no-translator --locale="$lang.UTF-8" --input="$pot" --output-file="$po"
  fi
  msgfmt --check --statistics -o /dev/null "$po"
done < po/LINGUAS
