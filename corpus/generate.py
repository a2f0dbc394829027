#!/usr/bin/env python3
"""Generate the corpus of PyTorch models (random weights) listed in corpus/models.json.

usage: /usr/bin/python3 corpus/generate.py OUT_DIR [--only NAME,...]

Writes OUT_DIR/NAME/model.onnx, OUT_DIR/NAME/test_data_set_{0,1,2}/ (random inputs at the
entry's first and second bindings and at the ranges' lower bounds, with PyTorch's outputs, in the
ONNX test-data layout, for `sod2 run --test-data`),
OUT_DIR/NAME/model.ranges.json (the entry's ranges as a
plain {symbol: [lo, hi, multiple]} map, for `sod2 plan/run --ranges`) and OUT_DIR/models.json
(the manifest entries of the models built, with params/file_bytes/onnx_nodes added).
Tested with Debian's torch 1.13, torchvision 0.14, torchaudio 0.13, onnx 1.12.
"""
import argparse
import collections
import json
import math
import os
import sys
import time
import traceback
import warnings

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
SEED = 0


# ----------------------------------------------------------------------------
# shared building blocks
# ----------------------------------------------------------------------------
def conv_bn_relu(cin, cout, k=3, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ResNetBasic(nn.Module):
    """torchvision's ResNet layout with BasicBlock and a configurable base width."""

    def __init__(self, layers=(2, 2, 2, 2), width=32, num_classes=100):
        super().__init__()
        from torchvision.models.resnet import BasicBlock

        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
        )
        self.inplanes = width
        self.stages = nn.ModuleList()
        self.channels = []
        for i, n in enumerate(layers):
            planes = width * 2**i
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or self.inplanes != planes:
                down = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
            blocks = [BasicBlock(self.inplanes, planes, stride, down)]
            self.inplanes = planes
            blocks += [BasicBlock(planes, planes) for _ in range(n - 1)]
            self.stages.append(nn.Sequential(*blocks))
            self.channels.append(planes)
        self.fc = nn.Linear(self.inplanes, num_classes) if num_classes else None

    def features(self, x):
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        return feats

    def forward(self, x):
        x = self.features(x)[-1]
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


class FirstOutput(nn.Module):
    """Keeps one output of a model returning a tuple or a dict."""

    def __init__(self, model, key=0):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, *args):
        return self.model(*args)[self.key]


def sinusoid_table(max_len, d):
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(max_len, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


# ----------------------------------------------------------------------------
# one builder per manifest name: returns (module, example inputs tuple)
# ----------------------------------------------------------------------------
def img(b=1, h=224, w=224):
    return (torch.randn(b, 3, h, w),)


def m_resnet18():
    return ResNetBasic((2, 2, 2, 2), width=32, num_classes=100), img(2, 224, 224)


def m_resnet50():
    import torchvision

    return torchvision.models.resnet50(weights=None, num_classes=100), img(2, 224, 224)


def m_mobilenet_v2():
    import torchvision

    return torchvision.models.mobilenet_v2(weights=None, num_classes=100), img(2, 224, 224)


def m_regnet_y_400mf():
    import torchvision

    return torchvision.models.regnet_y_400mf(weights=None, num_classes=100), img(2, 224, 224)


def m_mobilenet_v3_large():
    from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf

    setting, last = _mobilenet_v3_conf("mobilenet_v3_large", width_mult=0.75)
    return MobileNetV3(setting, last, num_classes=100), img(2, 224, 224)


def m_efficientnet_b0():
    import torchvision

    return torchvision.models.efficientnet_b0(weights=None, num_classes=100), img(2, 224, 224)


def m_shufflenet_v2_x0_5():
    import torchvision

    return torchvision.models.shufflenet_v2_x0_5(weights=None, num_classes=100), img(2, 224, 224)


def m_squeezenet1_1():
    import torchvision

    return torchvision.models.squeezenet1_1(weights=None, num_classes=100), img(2, 224, 224)


def m_densenet_small():
    from torchvision.models import DenseNet

    net = DenseNet(growth_rate=16, block_config=(4, 8, 12, 8), num_init_features=32, bn_size=4, num_classes=100)
    return net, img(2, 224, 224)


def m_convnext_small():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    cfg = [CNBlockConfig(48, 96, 2), CNBlockConfig(96, 192, 2), CNBlockConfig(192, 384, 4), CNBlockConfig(384, None, 2)]
    return ConvNeXt(cfg, stochastic_depth_prob=0.0, num_classes=100), img(2, 224, 224)


def m_vit_small():
    from torchvision.models.vision_transformer import VisionTransformer

    net = VisionTransformer(
        image_size=224, patch_size=16, num_layers=4, num_heads=4, hidden_dim=192, mlp_dim=768, num_classes=100
    )
    nn.init.normal_(net.heads.head.weight, std=0.02)  # torchvision zero-initialises the head
    return net, img(2, 224, 224)


def m_swin_small():
    from torchvision.models.swin_transformer import SwinTransformer

    net = SwinTransformer(
        patch_size=[4, 4], embed_dim=48, depths=[2, 2, 2, 2], num_heads=[2, 4, 8, 16], window_size=[7, 7],
        stochastic_depth_prob=0.0, num_classes=100,
    )
    return net, img(2, 224, 224)


def m_googlenet():
    import torchvision

    net = torchvision.models.googlenet(weights=None, num_classes=100, aux_logits=False, init_weights=True)
    return net, img(2, 224, 224)


def m_deeplabv3_mobilenet_v3():
    import torchvision

    net = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=21, aux_loss=False
    )
    return FirstOutput(net, "out"), img(2, 256, 256)


def m_lraspp_mobilenet_v3():
    import torchvision

    net = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=21)
    return FirstOutput(net, "out"), img(2, 256, 256)


class GruTagger(nn.Module):
    def __init__(self, feat=80, hidden=256, classes=32):
        super().__init__()
        self.gru = nn.GRU(feat, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, features):
        y, _ = self.gru(features)
        return self.out(y).log_softmax(-1)


def m_gru_seq():
    return GruTagger(), (torch.randn(2, 50, 80),)


class LstmLm(nn.Module):
    def __init__(self, vocab=1000, emb=128, hidden=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.out(y)


def m_lstm_lm():
    return LstmLm(), (torch.randint(0, 1000, (2, 50)),)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, vocab=1000, d=128, max_len=512):
        super().__init__()
        self.d = d
        self.src_emb = nn.Embedding(vocab, d)
        self.tgt_emb = nn.Embedding(vocab, d)
        self.register_buffer("pe", sinusoid_table(max_len, d))
        self.transformer = nn.Transformer(
            d_model=d,
            nhead=4,
            num_encoder_layers=2,
            num_decoder_layers=2,
            dim_feedforward=512,
            dropout=0.0,
            batch_first=True,
        )
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        s = src.shape[1]
        t = tgt.shape[1]
        x = self.src_emb(src) * math.sqrt(self.d) + self.pe[:s]
        y = self.tgt_emb(tgt) * math.sqrt(self.d) + self.pe[:t]
        # causal mask built from the target length: True above the diagonal = not allowed
        ones = torch.ones(t, t, dtype=torch.float32, device=tgt.device)
        mask = torch.triu(ones, diagonal=1) * -1e9
        h = self.transformer(x, y, tgt_mask=mask)
        return self.out(h)


def m_transformer_seq2seq():
    return Seq2SeqTransformer(), (torch.randint(0, 1000, (2, 20)), torch.randint(0, 1000, (2, 15)))


class ConformerEncoder(nn.Module):
    """torchaudio Conformer + CTC-style head.

    torchaudio's Conformer.forward builds its key padding mask with lengths.max().item(), which
    tracing freezes into a constant (and which would leave the mask width an unbounded
    data-dependent symbol). The mask is built here from the time dim of the features instead
    and the Conformer layers are called directly: identical results whenever max(lengths) == time.
    """

    def __init__(self, feat=80, classes=64):
        super().__init__()
        from torchaudio.models import Conformer

        self.conformer = Conformer(
            input_dim=feat, num_heads=4, ffn_dim=256, num_layers=2, depthwise_conv_kernel_size=15, dropout=0.0
        )
        self.out = nn.Linear(feat, classes)

    def forward(self, features, lengths):
        t = features.shape[1]
        pad = torch.arange(t, device=lengths.device, dtype=lengths.dtype).unsqueeze(0) >= lengths.unsqueeze(1)
        x = features.transpose(0, 1)
        for layer in self.conformer.conformer_layers:
            x = layer(x, pad)
        return self.out(x.transpose(0, 1)).log_softmax(-1)


def m_conformer_ta():
    return ConformerEncoder(), (torch.randn(2, 60, 80), torch.tensor([60, 60], dtype=torch.int64))


def m_wav2vec2_small():
    from torchaudio.models import wav2vec2_model

    net = wav2vec2_model(
        extractor_mode="group_norm",
        extractor_conv_layer_config=[(64, 10, 5), (64, 3, 2), (64, 3, 2), (64, 3, 2), (64, 2, 2)],
        extractor_conv_bias=False,
        encoder_embed_dim=128,
        encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=32,
        encoder_pos_conv_groups=4,
        encoder_num_layers=2,
        encoder_num_heads=4,
        encoder_attention_dropout=0.0,
        encoder_ff_interm_features=256,
        encoder_ff_interm_dropout=0.0,
        encoder_dropout=0.0,
        encoder_layer_norm_first=False,
        encoder_layer_drop=0.0,
        aux_num_out=32,
    )
    return FirstOutput(net, 0), (torch.randn(2, 16000),)


class Crnn(nn.Module):
    def __init__(self, classes=37):
        super().__init__()
        self.cnn = nn.Sequential(
            conv_bn_relu(1, 32),
            nn.MaxPool2d(2, 2),  # 16 x W/2
            conv_bn_relu(32, 64),
            nn.MaxPool2d(2, 2),  # 8 x W/4
            conv_bn_relu(64, 128),
            conv_bn_relu(128, 128),
            nn.MaxPool2d((2, 1), (2, 1)),  # 4 x W/4
            conv_bn_relu(128, 192),
            conv_bn_relu(192, 192),
            nn.MaxPool2d((2, 1), (2, 1)),  # 2 x W/4
            nn.Conv2d(192, 192, (2, 1), 1, 0),  # 1 x W/4
            nn.ReLU(inplace=True),
        )
        self.rnn = nn.LSTM(192, 128, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(256, classes)

    def forward(self, image):
        f = self.cnn(image).squeeze(2).permute(0, 2, 1)  # [B, W/4, C]
        y, _ = self.rnn(f)
        return self.out(y).log_softmax(-1)


def m_crnn():
    return Crnn(), (torch.randn(2, 1, 32, 128),)


class DbNet(nn.Module):
    def __init__(self, inner=64):
        super().__init__()
        self.backbone = ResNetBasic((2, 2, 2, 2), width=32, num_classes=0)
        self.lateral = nn.ModuleList([nn.Conv2d(c, inner, 1, bias=False) for c in self.backbone.channels])
        self.smooth = nn.ModuleList([nn.Conv2d(inner, inner // 4, 3, 1, 1, bias=False) for _ in self.backbone.channels])
        self.head = nn.Sequential(
            conv_bn_relu(inner, inner // 4),
            nn.ConvTranspose2d(inner // 4, inner // 4, 2, 2),
            nn.BatchNorm2d(inner // 4),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(inner // 4, 1, 2, 2),
            nn.Sigmoid(),
        )

    def forward(self, image):
        c2, c3, c4, c5 = self.backbone.features(image)
        p5 = self.lateral[3](c5)
        p4 = self.lateral[2](c4) + F.interpolate(p5, scale_factor=2.0, mode="nearest")
        p3 = self.lateral[1](c3) + F.interpolate(p4, scale_factor=2.0, mode="nearest")
        p2 = self.lateral[0](c2) + F.interpolate(p3, scale_factor=2.0, mode="nearest")
        o5 = F.interpolate(self.smooth[3](p5), scale_factor=8.0, mode="nearest")
        o4 = F.interpolate(self.smooth[2](p4), scale_factor=4.0, mode="nearest")
        o3 = F.interpolate(self.smooth[1](p3), scale_factor=2.0, mode="nearest")
        o2 = self.smooth[0](p2)
        fuse = torch.cat([o5, o4, o3, o2], 1)
        return self.head(fuse)


def m_dbnet():
    return DbNet(), img(2, 256, 320)


class SsdliteDetector(nn.Module):
    """torchvision SSD's eval forward (backbone, heads, default boxes, postprocess_detections:
    per-class score threshold and TopK, batched NMS) for one image given as a [1, 3, H, W]
    tensor, run at the image's own size: the transform's resize to 320x320 is left out (so the
    backbone, the anchors and the boxes follow H and W) and with it the rescaling of the boxes
    back to the original size (a ratio of 1). At 320x320 the outputs equal net([image[0]]).

    DefaultBoxGenerator.forward scales the anchors by torch.tensor([width, height]), which
    tracing freezes into the export size; the anchors are scaled here by the traced shape."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(net.transform.image_mean).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(net.transform.image_std).view(1, -1, 1, 1))

    def forward(self, image):
        net = self.net
        x = (image - self.mean) / self.std
        feats = list(net.backbone(x).values())
        head = net.head(feats)
        grid = [f.shape[-2:] for f in feats]
        boxes = net.anchor_generator._grid_default_boxes(grid, list(x.shape[-2:]), dtype=x.dtype)
        wh = torch._shape_as_tensor(x)[[3, 2]].to(x.dtype)
        anchors = torch.cat([(boxes[:, :2] - 0.5 * boxes[:, 2:]) * wh, (boxes[:, :2] + 0.5 * boxes[:, 2:]) * wh], -1)
        det = net.postprocess_detections(head, [anchors], [(x.shape[-2], x.shape[-1])])[0]
        return det["boxes"], det["scores"], det["labels"]


def m_ssdlite_mobilenet_v3():
    import torchvision

    net = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=21)
    # torchvision's 0.001 lets every anchor of every class through (random weights give scores
    # near 1/21): 0.2 keeps a few to a few dozen boxes, far apart in score (stable order)
    net.score_thresh = 0.2
    # 640x640: the last extra layer is 2x2 there (1x1 at 320, which BatchNorm cannot calibrate
    # on with a batch of 1)
    return SsdliteDetector(net), img(1, 640, 640)


BUILDERS = {n[2:]: f for n, f in globals().items() if n.startswith("m_") and callable(f)}


# ----------------------------------------------------------------------------
# export
# ----------------------------------------------------------------------------
def calibrate_batchnorm(model, args, steps=3):
    """Sets BatchNorm running statistics from a few random batches (cumulative average), as
    training would: with the default mean 0 / var 1, activations of randomly initialised deep
    nets shrink or blow up, and the outputs would be near zero or huge."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    gen = torch.Generator().manual_seed(SEED + 2)
    with torch.no_grad():
        for _ in range(steps):
            model(*[torch.randn(a.shape, generator=gen) if a.is_floating_point() else a for a in args])
    model.eval()


def dynamic_axes(entry):
    axes = {}
    for io in entry["inputs"] + entry["outputs"]:
        d = {i: s for i, s in enumerate(io["dims"]) if isinstance(s, str)}
        if d:
            axes[io["name"]] = d
    return axes


def make_inputs(entry, binding, gen):
    """Inputs at one binding: float inputs ~ N(0, 1); int64 token ids in [0, 1000);
    an input named "lengths" is filled with the "time" symbol's value."""
    xs = []
    for i in entry["inputs"]:
        shape = [binding[d] if isinstance(d, str) else d for d in i["dims"]]
        if i["dtype"] == "float32":
            xs.append(torch.randn(*shape, generator=gen))
        elif i["name"] == "lengths":
            xs.append(torch.full(shape, binding["time"], dtype=torch.int64))
        else:
            xs.append(torch.randint(0, 1000, shape, generator=gen, dtype=torch.int64))
    return xs


def test_bindings(entry):
    """test_data_set_0: the first (small) binding; _1: the second; _2: every symbol at its lower bound."""
    return [entry["bindings"][0], entry["bindings"][1], {k: r[0] for k, r in entry["ranges"].items()}]


def write_test_data(entry, model, model_dir):
    for k, b in enumerate(test_bindings(entry)):
        write_test_set(entry, model, b, os.path.join(model_dir, "test_data_set_%d" % k))


def write_test_set(entry, model, binding, d):
    """input_K.pb / output_K.pb at one binding, outputs computed by PyTorch."""
    from onnx import numpy_helper

    gen = torch.Generator().manual_seed(SEED + 1)
    xs = make_inputs(entry, binding, gen)
    with torch.no_grad():
        ys = model(*xs)
    if isinstance(ys, torch.Tensor):
        ys = (ys,)
    os.makedirs(d, exist_ok=True)
    for k, (io, t) in enumerate(zip(entry["inputs"], xs)):
        with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), io["name"]).SerializeToString())
    for k, (io, t) in enumerate(zip(entry["outputs"], ys)):
        with open(os.path.join(d, "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(t.detach().numpy(), io["name"]).SerializeToString())


def pin_static_dims(m, entry):
    """The exporter names some static output dims (e.g. "Resizeout_dim_1" for the classes of a
    Resize output); writes the manifest's integer dims back into the graph inputs/outputs.
    Returns whether anything changed; a manifest symbol where the file has another value raises."""
    changed = False
    for v, io in zip(list(m.graph.input) + list(m.graph.output), entry["inputs"] + entry["outputs"]):
        dims = v.type.tensor_type.shape.dim
        if len(dims) != len(io["dims"]):
            raise ValueError("%s: rank %d in the file, %d in the manifest" % (io["name"], len(dims), len(io["dims"])))
        for d, want in zip(dims, io["dims"]):
            have = d.dim_param or d.dim_value
            if have == want:
                continue
            if isinstance(want, int) and d.dim_param:
                d.dim_value = want  # clears dim_param (oneof)
                changed = True
            else:
                raise ValueError("%s: dims %s in the file, %s in the manifest" % (io["name"], [x.dim_param or x.dim_value for x in dims], io["dims"]))
    return changed


def export(entry, out_dir, test_data=True):
    name = entry["name"]
    torch.manual_seed(SEED)
    model, args = BUILDERS[name]()
    calibrate_batchnorm(model, args)
    model.eval()
    path = os.path.join(out_dir, entry["file"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # grad stays enabled: under no_grad, eval-mode nn.TransformerEncoderLayer / MultiheadAttention
    # take torch 1.13's fused "fast path" (aten::_transformer_encoder_layer_fwd,
    # aten::_native_multi_head_attention), which has no ONNX export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            args,
            path,
            opset_version=entry.get("opset", OPSET),
            input_names=[i["name"] for i in entry["inputs"]],
            output_names=[o["name"] for o in entry["outputs"]],
            dynamic_axes=dynamic_axes(entry),
            do_constant_folding=True,
        )
    m = onnx.load(path)
    if pin_static_dims(m, entry):
        onnx.save(m, path)
    onnx.checker.check_model(m)
    hist = collections.Counter(n.op_type for n in m.graph.node)
    with open(os.path.join(os.path.dirname(path), "model.ranges.json"), "w") as f:
        json.dump(entry["ranges"], f, indent=1)
    if test_data:
        write_test_data(entry, model, os.path.dirname(path))
    out = dict(entry)
    out["params"] = int(sum(p.numel() for p in model.parameters()))
    out["file_bytes"] = os.path.getsize(path)
    out["onnx_nodes"] = len(m.graph.node)
    out["onnx_ops_histogram"] = dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--no-test-data", action="store_true", help="skip NAME/test_data_set_{0,1,2} (PyTorch outputs)")
    a = ap.parse_args()
    with open(os.path.join(HERE, "models.json")) as f:
        manifest = json.load(f)
    names = [e["name"] for e in manifest]
    only = [s for s in a.only.split(",") if s]
    unknown = [s for s in only if s not in names]
    if unknown:
        print("unknown model(s): %s (known: %s)" % (", ".join(unknown), ", ".join(names)), file=sys.stderr)
        return 2
    missing = [n for n in names if n not in BUILDERS]
    if missing:
        print("manifest names without a builder: %s" % ", ".join(missing), file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(a.out_dir, exist_ok=True)
    built, failed = [], []
    for e in manifest:
        if only and e["name"] not in only:
            continue
        t0 = time.time()
        try:
            out = export(e, a.out_dir, not a.no_test_data)
        except Exception as ex:  # report, skip, fail at the end
            failed.append(e["name"])
            print("%-22s FAILED: %s: %s" % (e["name"], type(ex).__name__, str(ex).strip().splitlines()[0] if str(ex).strip() else ""))
            traceback.print_exc(file=sys.stderr)
            continue
        built.append(out)
        print(
            "%-22s nodes=%-5d %6.2f MB  params=%-9d %5.1f s"
            % (e["name"], out["onnx_nodes"], out["file_bytes"] / 1e6, out["params"], time.time() - t0),
            flush=True,
        )
    # merge with an existing manifest in OUT_DIR so that --only runs keep the other entries
    mpath = os.path.join(a.out_dir, "models.json")
    prev = {}
    if only and os.path.exists(mpath):
        with open(mpath) as f:
            prev = {x["name"]: x for x in json.load(f)}
    for b in built:
        prev[b["name"]] = b
    order = {n: i for i, n in enumerate(names)}
    entries = sorted((v for k, v in prev.items() if k in order), key=lambda x: order[x["name"]])
    with open(mpath, "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")
    if failed:
        print("failed: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
