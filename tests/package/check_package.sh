#!/usr/bin/env bash
# The Debian package (#28): cpack -G DEB from the build tree, then, without installing anything on the machine,
# unpack it into a scratch root (dpkg-deb -x) and check what an installed copy needs: Depends from the shared
# libraries plus the fonts, the binary and --version, the bundled models, lessons and Chinese catalogue found
# relative to the installed binary (not the source tree), a valid desktop entry, the icon and the man page.
# usage: check_package.sh BUILD_DIR WORK_DIR VERSION
set -euo pipefail
build=$1
work=$2
version=$3
rm -rf "$work"
mkdir -p "$work/root"
fail() { echo "FAIL: $*"; exit 1; }

(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >cpack.log 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/transformer-studio_"$version"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { ls "$work"; fail "no transformer-studio_${version}_<arch>.deb"; }
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for d in libglfw3 libc6 libstdc++6 libpcre2-8-0 fonts-wqy-microhei fonts-dejavu-core; do
  echo "$depends" | grep -q "$d" || fail "Depends lacks $d"
done
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is not $version"

dpkg-deb -x "$deb" "$work/root"
bin="$work/root/usr/bin/transformer-studio"
[ -x "$bin" ] || fail "no usr/bin/transformer-studio"
[ "$("$bin" --version)" = "transformer-studio $version" ] || fail "--version says '$("$bin" --version)'"

share="$work/root/usr/share"
for m in austen-gpt austen-llama zh-en-transformer; do
  [ -f "$share/transformer-studio/assets/models/$m/model.safetensors" ] || fail "model $m not installed"
done
[ ! -e "$share/transformer-studio/assets/models/notes" ] || fail "build notes were installed"
ls "$share/transformer-studio/assets/models/"*.py >/dev/null 2>&1 && fail "build scripts were installed"
[ -f "$share/locale/zh_CN/LC_MESSAGES/transformer-studio.mo" ] || fail "no Chinese catalogue"

# The installed binary uses its own data: lessons listed from the scratch root, a view rendered with the bundled
# default model found beside the binary (no --model), in Chinese.
lessons=$("$bin" lessons list)
n=$(echo "$lessons" | grep -c "$work/root/usr/share/transformer-studio/assets/lessons/" || true)
[ "$n" -ge 11 ] || { echo "$lessons"; fail "lessons not found in the installed tree ($n)"; }
"$bin" render --view attention --text "The cat sat on the mat." --out "$work/attention.png" >"$work/render.log" 2>&1 \
  || { cat "$work/render.log"; fail "render from the installed tree"; }
[ -s "$work/attention.png" ] || fail "render wrote no PNG"
"$bin" lessons check "$share/transformer-studio/assets/lessons/01-encoder-decoder.json" >"$work/lesson.log" 2>&1 \
  || { cat "$work/lesson.log"; fail "lessons check from the installed tree"; }
grep -q "zh-en-transformer" "$work/lesson.log" || fail "the installed lesson did not run on the installed translation model"

desktop="$share/applications/transformer-studio.desktop"
[ -f "$desktop" ] || fail "no desktop entry"
desktop-file-validate "$desktop" || fail "desktop-file-validate"
grep -q '^Exec=transformer-studio' "$desktop" || fail "desktop entry does not run transformer-studio"
[ -f "$share/icons/hicolor/scalable/apps/transformer-studio.svg" ] || fail "no icon"
xmllint --noout "$share/icons/hicolor/scalable/apps/transformer-studio.svg" || fail "icon is not well-formed SVG"
man="$share/man/man1/transformer-studio.1.gz"
[ -f "$man" ] || fail "no man page"
zcat "$man" | grep -q '^\.TH TRANSFORMER-STUDIO 1' || fail "man page has no .TH header"
[ -f "$share/doc/transformer-studio/CHANGELOG.md" ] || fail "no changelog"
[ -f "$share/doc/transformer-studio/README.zh-CN.md" ] || fail "no Chinese README"
[ -f "$share/doc/transformer-studio/docs/lessons.md" ] || fail "no docs/lessons.md (the lessons command's help points there)"
grep -q "^## $version" "$share/doc/transformer-studio/CHANGELOG.md" || fail "the changelog has no entry for $version"
echo "check_package: ok"
