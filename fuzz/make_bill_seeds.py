#!/usr/bin/env python3
"""Writes fuzz_bill's seed corpus (fuzz/corpus/fuzz_bill/): real-format bills as the unit tests
build them (tests/support/bill_files.cpp) behind fuzz_bill's two header bytes (fuzz_bill_checks.hpp:
mode, flags and sink refusal; limits and chunking), and its dictionary (fuzz/dict/fuzz_bill.dict).
Run from the repository root; the output is committed, so run it again only when the formats or
the header change."""
import json
import os
import struct
import zlib

OUT = "fuzz/corpus/fuzz_bill"
NO_REFUSAL = 7 << 5
FLAG_A, FLAG_B = 0x08, 0x10
# rows_max 128, bytes_max 32 KiB, chunks of 7 bytes; the same with 1-byte chunks; rows_max 2.
WIDE, BYTEWISE, TWO_ROWS = 7 | (7 << 3) | (1 << 6), 7 | (7 << 3), 1 | (7 << 3) | (2 << 6)

WECHAT_HEADER = ("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,"
                 "交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,"
                 "充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注")
WECHAT_SUMMARY = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"
ALIPAY_HEADER = ("支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,"
                 "对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,"
                 "商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,卡消费金额（元）,"
                 "退款批次号/请求号,服务费（元）,分润（元）,备注")
TIME = "2023-11-14 10:00:00"


def backticked(fields):
    return ",".join("`" + f for f in fields)


def wechat_bill(pay_fee="0.30000", refund_fee="-0.12000", fee_total="0.18000"):
    pay = [TIME, "wx2421b1c4370ec43b", "1900000001", "0", "", "4200000001202311140001", "P-0001",
           "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "JSAPI", "SUCCESS", "OTHERS", "CNY", "50.00", "0.00", "0",
           "0", "0.00", "0.00", "", "", "演出票,A区", "", pay_fee, "0.60%", "50.00", "0.00", ""]
    refund = [TIME, "wx2421b1c4370ec43b", "1900000001", "0", "", "4200000001202311140001", "P-0001",
              "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "JSAPI", "REFUND", "OTHERS", "CNY", "0.00", "0.00",
              "50000000382019052709732678859", "R-0001", "20.00", "0.00", "ORIGINAL", "SUCCESS",
              "演出票,A区", "", refund_fee, "0.60%", "0.00", "20.00", ""]
    return "\r\n".join([WECHAT_HEADER, backticked(pay), backticked(refund), WECHAT_SUMMARY,
                        backticked(["2", "50.00", "20.00", "0.00", fee_total, "50.00", "20.00"])]) + "\r\n"


def alipay_bill():
    rows = ["2023111422001400000000000001\t,P-0001\t,交易\t,座位票," + TIME + "," + TIME +
            ",\t,\t,\t,\t,*三(138****0000)\t,50.00,50.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,\t,0.30,0.00,",
            "2023111422001400000000000001\t,P-0001\t,退款\t,座位票," + TIME + "," + TIME +
            ",\t,\t,\t,\t,*三(138****0000)\t,-20.00,-20.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,R-0001\t,-0.12,0.00,"]
    return "\n".join(["#支付宝业务明细查询", "#账号：[20880000000000000156]",
                      "#-----------------------------------------业务明细列表----------", ALIPAY_HEADER]
                     + rows + ["#-----------------------------------------业务明细列表结束------",
                               "#交易合计：1笔，商家实收共50.00元，商家优惠共0.00元",
                               "#退款合计：1笔，商家实收退款共-20.00元，商家优惠退款共0.00元",
                               "#导出时间：[2023年11月15日 05:46:49]"]) + "\n"


def stripe_pages():
    def txn(i, kind, source):
        return {"id": "txn_%04d" % i, "object": "balance_transaction", "type": kind, "amount":
                source["amount"] * (1 if kind == "charge" else -1), "currency": "cny", "fee": 30,
                "created": 1699990000 + i, "source": source}
    charge = {"id": "ch_0001", "object": "charge", "amount": 5000, "currency": "cny",
              "payment_intent": "pi_0001", "metadata": {"paymentNo": "P-0001"}}
    refund = {"id": "re_0001", "object": "refund", "amount": 2000, "currency": "cny",
              "charge": "ch_0001", "payment_intent": {"id": "pi_0001"}, "metadata": {"refundNo": "R-0001"}}
    payout = {"id": "po_0001", "object": "payout", "amount": 100, "currency": "cny"}
    first = {"object": "list", "has_more": True, "data": [txn(1, "charge", charge), txn(2, "payout", payout)]}
    last = {"object": "list", "has_more": False, "data": [txn(3, "refund", refund)]}
    return json.dumps(first).encode() + b"\0" + json.dumps(last).encode()


def deflate(data, wbits):
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return c.compress(data) + c.flush()


def zip_archive(entries):
    """entries: (name bytes, content bytes, deflated?, wrong crc?)"""
    archive, directory = b"", b""
    for name, content, deflated, wrong_crc in entries:
        data = deflate(content, -15) if deflated else content
        crc = (zlib.crc32(content) + (1 if wrong_crc else 0)) & 0xFFFFFFFF
        common = struct.pack("<HHIIIIHH", 0, 8 if deflated else 0, 0x5B2A0000, crc, len(data),
                             len(content), len(name), 0)
        directory += struct.pack("<IHH", 0x02014B50, 20, 20) + common + struct.pack(
            "<HHHII", 0, 0, 0, 0, len(archive)) + name
        archive += struct.pack("<IH", 0x04034B50, 20) + common + name + data
    return archive + directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries),
                                             len(entries), len(directory), len(archive), 0)


def alipay_zip(deflated=True, wrong_crc=False):
    base = "20880000000000000156_20231114"
    return zip_archive([((base + "_业务明细(汇总).csv").encode("gbk"), "#汇总\n".encode("gbk"), True, False),
                        ((base + "_业务明细.csv").encode("gbk"), alipay_bill().encode("gbk"), deflated,
                         wrong_crc)])


def seed(name, mode, flags, limits, payload, refusal=NO_REFUSAL):
    if isinstance(payload, str):
        payload = payload.encode()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([mode | flags | refusal, limits]) + payload)


DICT = "fuzz/dict/fuzz_bill.dict"
DICT_WORDS = ["交易时间", "微信订单号", "微信支付订单号", "商户订单号", "交易状态", "订单金额", "总金额", "手续费",
              "商户退款单号", "退款金额", "应结订单金额", "申请退款金额", "总交易单数", "订单总金额", "应结订单总金额",
              "退款总金额", "申请退款总金额", "手续费总金额", "支付宝交易号", "业务类型", "完成时间", "服务费",
              "退款批次号/请求号", "商家实收", "（元）", "(元)", "交易", "退款", "#交易合计：", "#退款合计：", "笔",
              "元", "，", "商家实收共", "商家实收退款共", "_业务明细.csv", "_业务明细(汇总).csv"]
DICT_TOKENS = ["`", ",`", '"', '""', "\r\n", "\n", "\t", ",", "#", "SUCCESS", "REFUND", "REVOKED",
               "2023-11-14 10:00:00", "0.00", "-0.01", "0.00006", "50.00", "99999999999999999.99",
               "{", "}", "[", "]", ":", '"object"', '"list"', '"data"', '"has_more"', "true", "false",
               "null", '"id"', '"type"', '"charge"', '"payment"', '"refund"', '"payment_refund"',
               '"payout"', '"amount"', '"currency"', '"cny"', '"fee"', '"created"', "1699990000",
               "1699920000", "1700006400", '"source"', '"payment_intent"', '"metadata"', '"paymentNo"',
               '"refundNo"', '"balance_transaction"', '"pi_0001"', '"ch_0001"', '"re_0001"',
               '"txn_0001"', "\x1f\x8b\x08\x00", "PK\x03\x04", "PK\x01\x02", "PK\x05\x06",
               "\x00", "\xff\xff\xff\xff"]


def dict_entry(data):
    """A libFuzzer dictionary line: printable ASCII as is, every other byte as \\xNN."""
    text = "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\' else "\\x%02X" % b for b in data)
    return '"' + text + '"'


def write_dict():
    lines = ["# Tokens of gateway bills for libFuzzer (-dict=): the WeChat Pay and Alipay column names and",
             "# closing lines in UTF-8 and GBK, the backtick fields, Stripe balance-transaction keys, and the",
             "# gzip and zip signatures. Written by fuzz/make_bill_seeds.py."]
    for word in DICT_WORDS:
        lines += [dict_entry(word.encode()), dict_entry(word.encode("gbk"))]
    lines += [dict_entry(token.encode("latin-1")) for token in DICT_TOKENS]
    with open(DICT, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    write_dict()
    os.makedirs(OUT, exist_ok=True)
    wechat = wechat_bill().encode()
    seed("gunzip_wechat", 0, 0, WIDE, deflate(wechat, 31))
    seed("gunzip_two_members", 0, 0, WIDE, deflate(wechat[:100], 31) + deflate(wechat[100:], 31))
    seed("inflate_raw_alipay", 1, 0, WIDE, deflate(alipay_bill().encode("gbk"), -15))
    seed("zip_alipay", 2, 0, WIDE, alipay_zip())
    seed("zip_alipay_stored", 2, 0, WIDE, alipay_zip(deflated=False))
    seed("zip_alipay_wrong_crc", 2, 0, WIDE, alipay_zip(wrong_crc=True))
    seed("wechat_lines", 3, FLAG_B, WIDE, wechat)
    seed("wechat_lines_bytewise", 3, 0, BYTEWISE, wechat)
    seed("wechat_lines_two_rows", 3, 0, TWO_ROWS, wechat)
    # Fees at the int64 bound in 10^-5 yuan (once an overflow in the rounding to cents).
    seed("wechat_lines_fee_bounds", 3, 0, WIDE,
         wechat_bill("92233720368547.75807", "-92233720368547.75807", "0.00000"))
    seed("alipay_lines_utf8", 4, 0, WIDE, alipay_bill())
    seed("alipay_lines_gbk", 4, FLAG_A, WIDE, alipay_bill().encode("gbk"))
    seed("stripe_pages", 5, 0, WIDE, stripe_pages())
    seed("stripe_error", 5, FLAG_A, WIDE, '{"error":{"code":"rate_limit","type":"invalid_request_error"}}')
    seed("wechat_download", 6, 0, WIDE, wechat)
    seed("wechat_download_refused", 6, 0, WIDE, wechat, refusal=1 << 5)
    seed("wechat_download_gzip", 6, FLAG_A, WIDE, deflate(wechat, 31))
    seed("alipay_download_gbk", 7, FLAG_B, WIDE, alipay_bill())
    seed("alipay_download_zip", 7, FLAG_A, WIDE, alipay_zip())
    seed("alipay_download_stored", 7, 0, WIDE, alipay_bill().encode("gbk"))


if __name__ == "__main__":
    main()
