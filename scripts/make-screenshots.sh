#!/usr/bin/env bash
# Regenerates every screenshot README.md shows (resources/screenshots/*.png) from the shared models
# and the bundled sample, with the studio rendering offscreen.
#
#   scripts/make-screenshots.sh [SHARED] [OUT]     make screenshots SHARED=../shared
#
# SHARED is the shared corpus (default ../shared; its models/ folder holds the models and
# models.json with their ranges), OUT the folder written (default resources/screenshots).
# Environment: SOD2_BUILD_DIR (default build). Every studio run gets a fresh HOME and
# XDG_CONFIG_HOME so a layout, theme or recent-file list saved in QSettings cannot leak into a
# picture; the profile store is a temporary --db so the history shows only the runs made here.
# Latencies in profile_yolo.png, history.png and variants_dofa.png are measured on this machine
# and change from run to run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${SOD2_BUILD_DIR:-build}
SHARED=${1:-../shared}
OUT=${2:-resources/screenshots}
MODELS=$SHARED/models
SAMPLE=resources/models/sample_yolo_tiny.onnx
STUDIO=$BUILD/bin/sod2-studio
SOD2=$BUILD/bin/sod2

for f in "$STUDIO" "$SOD2"; do
  if [ ! -x "$f" ]; then
    echo "make-screenshots: $f is missing; build it with 'make build'" >&2
    exit 2
  fi
done
if [ ! -f "$MODELS/models.json" ]; then
  echo "make-screenshots: no $MODELS/models.json; pass the shared corpus folder (SHARED=...)" >&2
  exit 2
fi
mkdir -p "$OUT"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/profiles.db

# The ranges of models.json (the studio's sliders start inside them).
BERT_RANGE=batch=1:16:1,seq=1:512:1
MOE_RANGE=batch=1:8:1,seq=1:512:1
YOLO_RANGE=height=32:1024:32,width=32:1024:32
UNET_RANGE=batch=1:4:1,height=8:512:8,width=8:512:8
SKIPNET_RANGE=height=32:640:1,width=32:640:1
DOFA_RANGE=batch=1:8:1,height=32:320:1,width=32:320:1
CONFORMER_RANGE=batch=1:8:1,time=7:2048:1

# One studio screenshot: NAME.png at SIZE, the other arguments passed on. A fresh home per run.
shot() {
  local name=$1 size=$2
  shift 2
  local home
  home=$(mktemp -d "$WORK/home.XXXX")
  HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    QT_QPA_PLATFORM=offscreen "$STUDIO" --screenshot "$OUT/$name.png" --size "$size" "$@" \
    2> >(grep -v -e propagateSizeHints -e "support raise()" -e XDG_RUNTIME_DIR >&2)
  SHOTS=$((SHOTS + 1))
}
SHOTS=0

# The main window on bert_tiny at batch=4, seq=128: graph, inspector on a LayerNormalization,
# memory plan.
shot window_bert 1400x900 --view window --range "$BERT_RANGE" --bind batch=4,seq=128 \
  --select layers.0/ln2/LayerNormalization "$MODELS/bert_tiny/model.onnx"

# The memory plan of yolo_tiny at 320x320: one rectangle per tensor, arena and lower bound.
shot memory_yolo 1400x700 --view memory --range "$YOLO_RANGE" --bind height=320,width=320 \
  "$MODELS/yolo_tiny/model.onnx"

# The graph of unet_tiny at its second binding of models.json.
shot graph_unet 1400x728 --view graph --range "$UNET_RANGE" --bind batch=1,height=256,width=256 \
  "$MODELS/unet_tiny/model.onnx"

# Compare plans: moe_tiny at batch=4, seq=128 with its fused kernels beside the plan without
# fusion.
shot compare_fusion_moe 1400x600 --view compare --compare nofusion --range "$MOE_RANGE" \
  --bind batch=4,seq=128 "$MODELS/moe_tiny/model.onnx"

# Compare plans: yolo_tiny at 320x320 beside the same plan at 640x640.
shot compare_bindings_yolo 1400x600 --view compare --compare height=640,width=640 \
  --range "$YOLO_RANGE" --bind height=320,width=320 "$MODELS/yolo_tiny/model.onnx"

# Name scopes: conformer_tiny's blocks as frames, its first block's attention open.
shot graph_scopes_conformer 1400x800 --view graph --range "$CONFORMER_RANGE" \
  --bind batch=1,time=100 --select blocks.0/att/qkv/MatMul "$MODELS/conformer_tiny/model.onnx"
# The dark theme: the whole window on the bundled sample with a Concat selected.
shot window_dark_yolo 1400x900 --view window --theme dark --select Concat "$SAMPLE"

# skipnet's If, selected, with both branches opened in place (framed in amber).
shot graph_bodies_skipnet 1400x728 --view graph --open gated.1/If --select gated.1/If \
  --range "$SKIPNET_RANGE" --bind height=224,width=224 "$MODELS/skipnet/model.onnx"

# A package: yolo_tiny compiled by `sod2 compile`, opened at 320x320 with a Transpose selected;
# the status bar gives the plan version the runtime picks at that binding.
"$SOD2" compile "$MODELS/yolo_tiny/model.onnx" --range "$YOLO_RANGE" -o "$WORK/yolo_tiny.sod2" \
  >/dev/null
shot package_yolo 1400x900 --view window --bind height=320,width=320 --select Transpose \
  "$WORK/yolo_tiny.sod2"

# Runs for the history: yolo_tiny and bert_tiny at batch 1 and 4 on this machine, then a run on
# an Android device that is not attached, recorded as failed.
"$SOD2" profile "$MODELS/yolo_tiny/model.onnx" --range "$YOLO_RANGE" --bind height=320,width=320 \
  --runs 10 --db "$DB" >/dev/null
"$SOD2" profile "$MODELS/bert_tiny/model.onnx" --range "$BERT_RANGE" --bind batch=1,seq=128 \
  --runs 10 --db "$DB" >/dev/null
"$SOD2" profile "$MODELS/bert_tiny/model.onnx" --range "$BERT_RANGE" --bind batch=4,seq=128 \
  --runs 10 --db "$DB" >/dev/null
"$SOD2" profile "$MODELS/bert_tiny/model.onnx" --range "$BERT_RANGE" --bind batch=4,seq=128 \
  --device adb --runs 10 --db "$DB" >/dev/null 2>&1 || true

# The profile view: Export & profile of yolo_tiny at 320x320 on this machine (10 runs), recorded
# in the same store; the timeline of one run and every group with its time.
shot profile_yolo 1300x700 --view profile --profile-on local --db "$DB" --range "$YOLO_RANGE" \
  --bind height=320,width=320 "$MODELS/yolo_tiny/model.onnx"

# The history of that store: every run (the failed one in red), bert_tiny at batch 1 (run 2)
# against batch 4 (run 3) group by group.
shot history 1300x560 --view history --db "$DB" --compare-runs 2,3 --range "$BERT_RANGE" \
  "$MODELS/bert_tiny/model.onnx"

# The shapes table of moe_tiny at batch=4, seq=128 at the first expert's NonZero: symbolic dims
# (its execution symbol at its bound), dims and bytes per value, producer and class.
shot shapes_moe 1400x600 --view shapes --select layers.0/moe/NonZero --range "$MOE_RANGE" \
  --bind batch=4,seq=128 "$MODELS/moe_tiny/model.onnx"

# The summary of bert_tiny: ops by class, dims resolved, arena against the baselines.
shot summary_bert 900x500 --view summary --range "$BERT_RANGE" --bind batch=4,seq=128 \
  "$MODELS/bert_tiny/model.onnx"

# The Variants dock: the dofa_mbv3 family package, its variants measured here, then the demo
# with a 10 ms budget for 8 s and 4 busy processes from 2 to 6 s.
"$SOD2" compile --family "$MODELS/dofa_mbv3/variants.json" --range "$DOFA_RANGE" \
  -o "$WORK/dofa_mbv3.sod2" >/dev/null
shot variants_dofa 1300x800 --view variants --family "$WORK/dofa_mbv3.sod2" \
  --family-bind batch=1,height=224,width=224 --ofa-measure local --ofa-demo 10:8:2:6:4

# The Backend dock: the bundled sample placed on Vulkan (lavapipe without a GPU), each step with
# where it runs and why the CPU, and the reasons by count.
shot backend_vulkan 1400x800 --view backend --select /Reshape "$SAMPLE"

echo "make-screenshots: wrote $SHOTS pictures to $OUT"
