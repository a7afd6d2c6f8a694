"""How far apart two colours look, with normal colour vision and with each of the three dichromacies.

sRGB → linear RGB (IEC 61966-2-1) → the Machado, Oliveira & Fernandes (2009) simulation of protanopia, deuteranopia or
tritanopia at severity 1.0 (a 3×3 matrix on linear RGB, the result clipped to the gamut: the same matrices Chrome's
and Firefox's developer tools use) → CIE XYZ → CIELAB (D65 white) → the CIEDE2000 colour difference (Sharma, Wu &
Dalal 2005, with k_L = k_C = k_H = 1). The palette test (tests/test_palette.py) asks every pair of a categorical
palette in use to stay a minimum ΔE2000 apart under all four.
"""
from __future__ import annotations

import math

Vec = tuple[float, float, float]

# Machado, Oliveira & Fernandes 2009, "A physiologically-based model for simulation of color vision deficiency",
# IEEE TVCG 15(6); severity 1.0 of their supplementary table. Each row sums to 1: a grey stays the same grey.
MACHADO: dict[str, tuple[Vec, Vec, Vec]] = {
    "protanopia": ((0.152286, 1.052583, -0.204868),
                   (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968),
                     (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779),
                   (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}
VISIONS = ("normal", *MACHADO)  # what the palette test checks each pair under

# linear sRGB → CIE XYZ (D65), IEC 61966-2-1; the D65 white point is the sum of each row
_XYZ = ((0.4124564, 0.3575761, 0.1804375),
        (0.2126729, 0.7151522, 0.0721750),
        (0.0193339, 0.1191920, 0.9503041))
_WHITE = tuple(sum(row) for row in _XYZ)


def hex_rgb(colour: str) -> Vec:
    """'#rrggbb' as sRGB values in [0, 1]."""
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))


def to_linear(srgb: Vec) -> Vec:
    """sRGB in [0, 1] → linear light (the sRGB transfer function undone)."""
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in srgb)


def to_srgb(linear: Vec) -> Vec:
    """Linear light → sRGB in [0, 1] (clipped to the gamut first)."""
    out = []
    for c in linear:
        c = min(1.0, max(0.0, c))
        out.append(12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)
    return tuple(out)


def _apply(m: tuple[Vec, Vec, Vec], v: Vec) -> Vec:
    return tuple(sum(m[i][j] * v[j] for j in range(3)) for i in range(3))


def simulate(linear: Vec, vision: str) -> Vec:
    """Linear RGB as seen with `vision` ("normal", or a key of MACHADO), clipped to [0, 1] as a screen shows it."""
    if vision == "normal":
        return linear
    return tuple(min(1.0, max(0.0, c)) for c in _apply(MACHADO[vision], linear))


def lab(linear: Vec) -> Vec:
    """Linear sRGB → CIELAB (L*, a*, b*), D65 white."""
    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = (f(c / w) for c, w in zip(_apply(_XYZ, linear), _WHITE, strict=True))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e2000(lab1: Vec, lab2: Vec) -> float:
    """The CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu & Dalal 2005, equations 1-26)."""
    L1, a1, b1 = lab1
    L2, a2, b2 = lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dL, dC = L2 - L1, c2p - c1p
    dh = 0.0 if c1p * c2p == 0 else h2p - h1p - 360 * ((h2p - h1p > 180) - (h2p - h1p < -180))
    dH = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    L_mean, cp_mean = (L1 + L2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    else:
        h_mean = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    d_theta = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_mean ** 7 / (cp_mean ** 7 + 25 ** 7))
    s_l = 1 + 0.015 * (L_mean - 50) ** 2 / math.sqrt(20 + (L_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_mean, 1 + 0.015 * cp_mean * t
    r_t = -math.sin(math.radians(2 * d_theta)) * r_c
    return math.sqrt((dL / s_l) ** 2 + (dC / s_c) ** 2 + (dH / s_h) ** 2 + r_t * (dC / s_c) * (dH / s_h))


def seen(colour: str, vision: str = "normal") -> Vec:
    """CIELAB of '#rrggbb' as seen with `vision`."""
    return lab(simulate(to_linear(hex_rgb(colour)), vision))


def distance(c1: str, c2: str, vision: str = "normal") -> float:
    """ΔE2000 between two '#rrggbb' colours as seen with `vision`."""
    return delta_e2000(seen(c1, vision), seen(c2, vision))
