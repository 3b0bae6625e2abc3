"""glibc's `log` for float64, written with lax operations, bit for bit.

Why random needs it: XLA's CPU backend lowers float64 `log` (and the `log(1 + x)` half of
`log1p`) to a call of the C library's `log`, so `jax.random.normal`, `exponential`, `gumbel`
in float64 carry glibc's last bit. NumPy's `log` (SIMD) and LLVM's differ from it in about
one value in three hundred, and float64 `erf_inv` multiplies that into tens of ulps. This
module replays glibc's algorithm (2.28+, from Arm's optimized-routines, MIT licensed:
sysdeps/ieee754/dbl-64/e_log.c) with the table and polynomials of glibc 2.36, and with
fused multiply-adds exactly where glibc's x86-64 FMA variant (`__log_fma`, the one every
FMA-capable CPU runs) has them, as read from its machine code. Pure arithmetic and one
table lookup, so eager NumPy and the Numba backend give the same bits as glibc.

Algorithm: x = 2**k * z with z in [0x1.6p-1, 0x1.6p0); the top 7 bits of z pick a table
entry (invc ~ 1/c, logc = log(c)); log(x) = k ln2 + log(c) + log1p(r) with r = z*invc - 1
computed by one fma, log1p(r) - r by a degree-6 polynomial. Inputs within 1/16 of 1 use a
degree-12 polynomial in r = x - 1 with r**2/2 split exactly (hi/lo). Subnormals are
scaled by 2**52 first; log(0) = -inf, log(inf) = inf, log(x < 0) = NaN.

Imports core and lax only.
"""
import numpy as np

from .. import lax
from .fused_multiply_add import fma

# (invc, logc) for the 128 subintervals, as IEEE bit patterns (glibc's __log_data.tab).
_TABLE_BITS = (
    0x3FF734F0C3E0DE9F, 0xBFD7CC7F79E69000, 0x3FF713786A2CE91F, 0xBFD76FEEC20D0000,
    0x3FF6F26008FAB5A0, 0xBFD713E31351E000, 0x3FF6D1A61F138C7D, 0xBFD6B85B38287800,
    0x3FF6B1490BC5B4D1, 0xBFD65D5590807800, 0x3FF69147332F0CBA, 0xBFD602D076180000,
    0x3FF6719F18224223, 0xBFD5A8CA86909000, 0x3FF6524F99A51ED9, 0xBFD54F4356035000,
    0x3FF63356AA8F24C4, 0xBFD4F637C36B4000, 0x3FF614B36B9DDC14, 0xBFD49DA7FDA85000,
    0x3FF5F66452C65C4C, 0xBFD445923989A800, 0x3FF5D867B5912C4F, 0xBFD3EDF439B0B800,
    0x3FF5BABCCB5B90DE, 0xBFD396CE448F7000, 0x3FF59D61F2D91A78, 0xBFD3401E17BDA000,
    0x3FF5805612465687, 0xBFD2E9E2EF468000, 0x3FF56397CEE76BD3, 0xBFD2941B3830E000,
    0x3FF54725E2A77F93, 0xBFD23EC58CDA8800, 0x3FF52AFF42064583, 0xBFD1E9E129279000,
    0x3FF50F22DBB2BDDF, 0xBFD1956D2B48F800, 0x3FF4F38F4734DED7, 0xBFD141679AB9F800,
    0x3FF4D843CFDE2840, 0xBFD0EDD094EF9800, 0x3FF4BD3EC078A3C8, 0xBFD09AA518DB1000,
    0x3FF4A27FC3E0258A, 0xBFD047E65263B800, 0x3FF4880524D48434, 0xBFCFEB224586F000,
    0x3FF46DCE1B192D0B, 0xBFCF474A7517B000, 0x3FF453D9D3391854, 0xBFCEA4443D103000,
    0x3FF43A2744B4845A, 0xBFCE020D44E9B000, 0x3FF420B54115F8FB, 0xBFCD60A22977F000,
    0x3FF40782DA3EF4B1, 0xBFCCC00104959000, 0x3FF3EE8F5D57FE8F, 0xBFCC202956891000,
    0x3FF3D5D9A00B4CE9, 0xBFCB81178D811000, 0x3FF3BD60C010C12B, 0xBFCAE2C9CCD3D000,
    0x3FF3A5242B75DAB8, 0xBFCA45402E129000, 0x3FF38D22CD9FD002, 0xBFC9A877681DF000,
    0x3FF3755BC5847A1C, 0xBFC90C6D69483000, 0x3FF35DCE49AD36E2, 0xBFC87120A645C000,
    0x3FF34679984DD440, 0xBFC7D68FB4143000, 0x3FF32F5CCEFFCB24, 0xBFC73CB83C627000,
    0x3FF3187775A10D49, 0xBFC6A39A9B376000, 0x3FF301C8373E3990, 0xBFC60B3154B7A000,
    0x3FF2EB4EBB95F841, 0xBFC5737D76243000, 0x3FF2D50A0219A9D1, 0xBFC4DC7B8FC23000,
    0x3FF2BEF9A8B7FD2A, 0xBFC4462C51D20000, 0x3FF2A91C7A0C1BAB, 0xBFC3B08ABC830000,
    0x3FF293726014B530, 0xBFC31B996B490000, 0x3FF27DFA5757A1F5, 0xBFC2875490A44000,
    0x3FF268B39B1D3BBF, 0xBFC1F3B9F879A000, 0x3FF2539D838FF5BD, 0xBFC160C8252CA000,
    0x3FF23EB7AAC9083B, 0xBFC0CE7F57F72000, 0x3FF22A012BA940B6, 0xBFC03CDC49FEA000,
    0x3FF2157996CC4132, 0xBFBF57BDBC4B8000, 0x3FF201201DD2FC9B, 0xBFBE370896404000,
    0x3FF1ECF4494D480B, 0xBFBD17983EF94000, 0x3FF1D8F5528F6569, 0xBFBBF9674ED8A000,
    0x3FF1C52311577E7C, 0xBFBADC79202F6000, 0x3FF1B17C74CB26E9, 0xBFB9C0C3E7288000,
    0x3FF19E010C2C1AB6, 0xBFB8A646B372C000, 0x3FF18AB07BB670BD, 0xBFB78D01B3AC0000,
    0x3FF1778A25EFBCB6, 0xBFB674F145380000, 0x3FF1648D354C31DA, 0xBFB55E0E6D878000,
    0x3FF151B990275FDD, 0xBFB4485CDEA1E000, 0x3FF13F0EA432D24C, 0xBFB333D94D6AA000,
    0x3FF12C8B7210F9DA, 0xBFB22079F8C56000, 0x3FF11A3028ECB531, 0xBFB10E4698622000,
    0x3FF107FBDA8434AF, 0xBFAFFA6C6AD20000, 0x3FF0F5EE0F4E6BB3, 0xBFADDA8D4A774000,
    0x3FF0E4065D2A9FCE, 0xBFABBCECE4850000, 0x3FF0D244632CA521, 0xBFA9A1894012C000,
    0x3FF0C0A77CE2981A, 0xBFA788583302C000, 0x3FF0AF2F83C636D1, 0xBFA5715E67D68000,
    0x3FF09DDB98A01339, 0xBFA35C8A49658000, 0x3FF08CABAF52E7DF, 0xBFA149E364154000,
    0x3FF07B9F2F4E28FB, 0xBF9E72C082EB8000, 0x3FF06AB58C358F19, 0xBF9A55F152528000,
    0x3FF059EEA5ECF92C, 0xBF963D62CF818000, 0x3FF04949CDD12C90, 0xBF9228FB8CAA0000,
    0x3FF038C6C6F0ADA9, 0xBF8C317B20F90000, 0x3FF02865137932A9, 0xBF8419355DAA0000,
    0x3FF0182427EA7348, 0xBF781203C2EC0000, 0x3FF008040614B195, 0xBF60040979240000,
    0x3FEFE01FF726FA1A, 0x3F6FEFF384900000, 0x3FEFA11CC261EA74, 0x3F87DC41353D0000,
    0x3FEF6310B081992E, 0x3F93CEA3C4C28000, 0x3FEF25F63CEEADCD, 0x3F9B9FC114890000,
    0x3FEEE9C8039113E7, 0x3FA1B0D8CE110000, 0x3FEEAE8078CBB1AB, 0x3FA58A5BD001C000,
    0x3FEE741AA29D0C9B, 0x3FA95C8340D88000, 0x3FEE3A91830A99B5, 0x3FAD276AEF578000,
    0x3FEE01E009609A56, 0x3FB07598E598C000, 0x3FEDCA01E577BB98, 0x3FB253F5E30D2000,
    0x3FED92F20B7C9103, 0x3FB42EDD8B380000, 0x3FED5CAC66FB5CCE, 0x3FB606598757C000,
    0x3FED272CAA5EDE9D, 0x3FB7DA76356A0000, 0x3FECF26E3E6B2CCD, 0x3FB9AB434E1C6000,
    0x3FECBE6DA2A77902, 0x3FBB78C7BB0D6000, 0x3FEC8B266D37086D, 0x3FBD431332E72000,
    0x3FEC5894BD5D5804, 0x3FBF0A3171DE6000, 0x3FEC26B533BB9F8C, 0x3FC067152B914000,
    0x3FEBF583EEECE73F, 0x3FC147858292B000, 0x3FEBC4FD75DB96C1, 0x3FC2266ECDCA3000,
    0x3FEB951E0C864A28, 0x3FC303D7A6C55000, 0x3FEB65E2C5EF3E2C, 0x3FC3DFC33C331000,
    0x3FEB374867C9888B, 0x3FC4BA366B7A8000, 0x3FEB094B211D304A, 0x3FC5933928D1F000,
    0x3FEADBE885F2EF7E, 0x3FC66ACD2418F000, 0x3FEAAF1D31603DA2, 0x3FC740F8EC669000,
    0x3FEA82E63FD358A7, 0x3FC815C0F51AF000, 0x3FEA5740EF09738B, 0x3FC8E92954F68000,
    0x3FEA2C2A90AB4B27, 0x3FC9BB3602F84000, 0x3FEA01A01393F2D1, 0x3FCA8BED1C2C0000,
    0x3FE9D79F24DB3C1B, 0x3FCB5B515C01D000, 0x3FE9AE2505C7B190, 0x3FCC2967CCBCC000,
    0x3FE9852EF297CE2F, 0x3FCCF635D5486000, 0x3FE95CBAEEA44B75, 0x3FCDC1BD3446C000,
    0x3FE934C69DE74838, 0x3FCE8C01B8CFE000, 0x3FE90D4F2F6752E6, 0x3FCF5509C0179000,
    0x3FE8E6528EFFD79D, 0x3FD00E6C121FB800, 0x3FE8BFCE9FCC007C, 0x3FD071B80E93D000,
    0x3FE899C0DABEC30E, 0x3FD0D46B9E867000, 0x3FE87427AA2317FB, 0x3FD13687334BD000,
    0x3FE84F00ACB39A08, 0x3FD1980D67234800, 0x3FE82A49E8653E55, 0x3FD1F8FFE0CC8000,
    0x3FE8060195F40260, 0x3FD2595FD7636800, 0x3FE7E22563E0A329, 0x3FD2B9300914A800,
    0x3FE7BEB377DCB5AD, 0x3FD3187210436000, 0x3FE79BAA679725C2, 0x3FD377266DEC1800,
    0x3FE77907F2170657, 0x3FD3D54FFBAF3000, 0x3FE756CADBD6130C, 0x3FD432EEE32FE000,
)
_A_BITS = (0xBFE0000000000001, 0x3FD555555551305B, 0xBFCFFFFFFFEB4590, 0x3FC999B324F10111, 0xBFC55575E506C89F)  # log1p(r) - r = r^2 (A0 + r A1 + ...)
_B_BITS = (
    0xBFE0000000000000, 0x3FD5555555555577, 0xBFCFFFFFFFFFFDCB, 0x3FC999999995DD0C,
    0xBFC55555556745A7, 0x3FC24924A344DE30, 0xBFBFFFFFA4423D65, 0x3FBC7184282AD6CA,
    0xBFB999EB43B068FF, 0x3FB78182F7AFD085, 0xBFB5521375D145CD,
)  # near 1: log(1 + r) = r + r^2 B0 + r^3 (B1 + r B2 + ...)
_LN2_HI_BITS, _LN2_LO_BITS = 0x3FE62E42FEFA3800, 0x3D2EF35793C76730


def _f64(bits):
    return np.uint64(bits).view(np.float64)


_INVC = np.array(_TABLE_BITS[0::2], np.uint64).view(np.float64)
_LOGC = np.array(_TABLE_BITS[1::2], np.uint64).view(np.float64)
_A = tuple(_f64(b) for b in _A_BITS)
_B = tuple(_f64(b) for b in _B_BITS)
_LN2_HI, _LN2_LO = _f64(_LN2_HI_BITS), _f64(_LN2_LO_BITS)

_NEAR_ONE_LO = 0x3FEE000000000000  # asuint64(1 - 0x1p-4)
_NEAR_ONE_SPAN = 0x3FF1090000000000 - _NEAR_ONE_LO  # up to asuint64(1 + 0x1.09p-4)
_OFF = 0x3FE6000000000000
_TWO_64 = 2**64
_F64, _U64, _I64 = np.dtype(np.float64), np.dtype(np.uint64), np.dtype(np.int64)


def _u(v):
    """A uint64 constant; negative values wrap as C's unsigned arithmetic does."""
    return np.uint64(v % _TWO_64)


def _c(v):
    return np.float64(v)


def _lookup(table, index):
    return lax.gather(table, lax.expand_dims(index, (index.ndim,)), axes=(0,))


def _log_table(ix):
    """The main path, for x = asdouble(ix) positive and normal."""
    tmp = lax.add(ix, _u(-_OFF))
    index = lax.convert_element_type(
        lax.bitwise_and(lax.shift_right_logical(tmp, _u(45)), _u(127)), np.int32)
    k = lax.shift_right_arithmetic(lax.bitcast_convert_type(tmp, _I64), np.int64(52))
    z = lax.bitcast_convert_type(lax.sub(ix, lax.bitwise_and(tmp, _u(0xFFF << 52))), _F64)
    invc, logc = _lookup(_INVC, index), _lookup(_LOGC, index)
    r = fma(z, invc, _c(-1.0))
    kd = lax.convert_element_type(k, _F64)
    w = fma(kd, _LN2_HI, logc)
    hi = lax.add(r, w)
    lo = fma(kd, _LN2_LO, lax.add(lax.sub(w, hi), r))
    r2 = lax.mul(r, r)
    a = _A
    poly = fma(fma(r, a[4], a[3]), r2, fma(r, a[2], a[1]))
    return lax.add(fma(lax.mul(r, r2), poly, fma(r2, a[0], lo)), hi)


def _log_near_one(x):
    """|x - 1| < 1/16: no table; r**2/2 is split so that its rounding error is kept."""
    b = _B
    r = lax.sub(x, _c(1.0))
    r2 = lax.mul(r, r)
    r3 = lax.mul(r, r2)
    p = fma(r3, b[10], fma(r2, b[9], fma(r, b[8], b[7])))
    p = fma(p, r3, fma(r2, b[6], fma(r, b[5], b[4])))
    p = fma(p, r3, fma(r2, b[3], fma(r, b[2], b[1])))
    two27 = _c(2.0**27)
    rhi = fma(lax.neg(r), two27, fma(r, two27, r))  # r rounded to its top 26 bits
    rlo = lax.sub(r, rhi)
    rhi2 = lax.mul(rhi, rhi)
    hi = fma(rhi2, b[0], r)
    lo = fma(rhi2, b[0], lax.sub(r, hi))
    lo = fma(lax.mul(b[0], rlo), lax.add(r, rhi), lo)
    return lax.add(hi, fma(p, r3, lo))


def log(x):
    """glibc's log of a float64 array (see the module docstring)."""
    ix = lax.bitcast_convert_type(x, _U64)
    # subnormals: scale into the normal range, k absorbs the 52 (as glibc)
    subnormal = lax.bitwise_and(lax.gt(x, _c(0.0)), lax.lt(x, _c(np.finfo(np.float64).tiny)))
    scaled = lax.add(lax.bitcast_convert_type(lax.mul(x, _c(2.0**52)), _U64), _u(-(52 << 52)))
    ix_normal = lax.select(subnormal, scaled, ix)
    near_one = lax.lt(lax.add(ix, _u(-_NEAR_ONE_LO)), _u(_NEAR_ONE_SPAN))
    out = lax.select(near_one, _log_near_one(x), _log_table(ix_normal))
    out = lax.select(lax.eq(x, _c(1.0)), lax.broadcast_in_dim(_c(0.0), x.shape, ()), out)
    return _special_cases(x, out)


def _special_cases(x, out):
    def full(v):
        return lax.broadcast_in_dim(_c(v), x.shape, ())

    out = lax.select(lax.gt(x, _c(0.0)), out, full(np.nan))  # negative or NaN
    out = lax.select(lax.eq(x, _c(0.0)), full(-np.inf), out)
    return lax.select(lax.eq(x, _c(np.inf)), full(np.inf), out)


__all__ = ["log"]
