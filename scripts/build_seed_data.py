"""Writes seed_data/*.csv: a bakery's materials and six months of stock movements.

Deterministic (fixed random seed), so the committed CSVs can be regenerated and diffed.
Levels are not written: `flask seed` replays the movements, so levels equal the ledger by construction.

    python scripts/build_seed_data.py
"""

from __future__ import annotations

import csv
import random
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "seed_data"
rng = random.Random(20261122)

WAREHOUSES = [
    ("WH01", "主仓库", "Main Warehouse", "A栋一楼 Building A, ground floor"),
    ("WH02", "冷库", "Cold Store", "B栋 Building B, 0-4°C"),
    ("WH03", "包材仓", "Packaging Store", "C栋二楼 Building C, first floor"),
]

SUPPLIERS = [
    ("S01", "中粮面业", "COFCO Flour Co.", "020-8888-0101"),
    ("S02", "金像面粉厂", "Golden Statue Flour Mill", "0755-2666-0202"),
    ("S03", "太古糖业", "Taikoo Sugar", "021-6333-0303"),
    ("S04", "光明乳业", "Bright Dairy", "021-5444-0404"),
    ("S05", "安佳乳品", "Anchor Dairy", "021-6555-0505"),
    ("S06", "益海嘉里", "Yihai Kerry Oils", "021-3866-0606"),
    ("S07", "安琪酵母", "Angel Yeast", "0717-636-0707"),
    ("S08", "德清源蛋业", "Deqingyuan Eggs", "010-8999-0808"),
    ("S09", "嘉利宝", "Callebaut", "021-6111-0909"),
    ("S10", "紫江包装", "Zijiang Packaging", "021-6222-1010"),
    ("S11", "新疆果业", "Xinjiang Fruit Co.", "0991-288-1111"),
    ("S12", "味香调料", "Weixiang Flavours", "020-3777-1212"),
]

# category code, zh, en, default warehouse, supplier codes
CATEGORIES = [
    ("FL", "面粉类", "Flours", "WH01", ["S01", "S02"]),
    ("SU", "糖类", "Sugars & Sweeteners", "WH01", ["S03"]),
    ("DA", "乳制品", "Dairy", "WH02", ["S04", "S05"]),
    ("EG", "蛋品", "Eggs", "WH02", ["S08"]),
    ("FO", "油脂", "Fats & Oils", "WH01", ["S06", "S05"]),
    ("LE", "膨松剂", "Leavening Agents", "WH01", ["S07"]),
    ("FV", "香精香料", "Flavourings", "WH01", ["S12"]),
    ("PK", "包装材料", "Packaging", "WH03", ["S10"]),
    ("NS", "坚果籽仁", "Nuts & Seeds", "WH01", ["S11"]),
    ("FR", "果料馅料", "Fruits & Fillings", "WH02", ["S11", "S12"]),
    ("CH", "巧克力可可", "Chocolate & Cocoa", "WH01", ["S09"]),
    ("AD", "添加剂", "Additives", "WH01", ["S07", "S12"]),
]

# (category, zh, en, unit, spec, unit cost in yuan per unit)
MATERIALS = [
    ("FL", "高筋面粉", "Bread Flour", "kg", "25kg/袋 蛋白质≥12.5%", "6.20"),
    ("FL", "低筋面粉", "Cake Flour", "kg", "25kg/袋 蛋白质≤8.5%", "5.80"),
    ("FL", "中筋面粉", "All-Purpose Flour", "kg", "25kg/袋", "5.10"),
    ("FL", "全麦面粉", "Whole Wheat Flour", "kg", "25kg/袋 石磨", "7.40"),
    ("FL", "黑麦粉", "Rye Flour", "kg", "25kg/袋", "9.60"),
    ("FL", "法式面包粉", "French Bread Flour T65", "kg", "25kg/袋 T65", "8.90"),
    ("FL", "玉米淀粉", "Corn Starch", "kg", "25kg/袋", "4.30"),
    ("FL", "糯米粉", "Glutinous Rice Flour", "kg", "20kg/袋", "7.80"),
    ("FL", "粘米粉", "Rice Flour", "kg", "20kg/袋", "6.50"),
    ("FL", "马铃薯淀粉", "Potato Starch", "kg", "25kg/袋", "8.10"),
    ("FL", "木薯淀粉", "Tapioca Starch", "kg", "25kg/袋", "6.90"),
    ("FL", "燕麦粉", "Oat Flour", "kg", "20kg/袋", "11.20"),
    ("FL", "杏仁粉", "Almond Flour", "kg", "10kg/箱 超细", "68.00"),
    ("SU", "细砂糖", "Caster Sugar", "kg", "50kg/袋", "6.80"),
    ("SU", "绵白糖", "Soft White Sugar", "kg", "25kg/袋", "7.20"),
    ("SU", "糖粉", "Icing Sugar", "kg", "20kg/袋 含3%淀粉", "9.50"),
    ("SU", "红糖", "Brown Sugar", "kg", "25kg/袋", "8.40"),
    ("SU", "黑糖", "Muscovado Sugar", "kg", "10kg/箱", "16.80"),
    ("SU", "麦芽糖浆", "Malt Syrup", "kg", "25kg/桶", "7.60"),
    ("SU", "葡萄糖浆", "Glucose Syrup", "kg", "25kg/桶 DE42", "6.20"),
    ("SU", "转化糖浆", "Invert Sugar Syrup", "kg", "25kg/桶", "9.10"),
    ("SU", "蜂蜜", "Honey", "kg", "25kg/桶 洋槐蜜", "38.00"),
    ("SU", "海藻糖", "Trehalose", "kg", "20kg/袋", "24.00"),
    ("SU", "赤藓糖醇", "Erythritol", "kg", "25kg/袋", "19.50"),
    ("SU", "枫糖浆", "Maple Syrup", "L", "4L/桶", "85.00"),
    ("SU", "珍珠糖", "Pearl Sugar", "kg", "10kg/箱", "22.00"),
    ("DA", "无盐黄油", "Unsalted Butter", "kg", "25kg/箱 82%乳脂", "62.00"),
    ("DA", "有盐黄油", "Salted Butter", "kg", "25kg/箱", "64.00"),
    ("DA", "片状黄油", "Butter Sheet", "kg", "1kg×10片/箱 起酥用", "72.00"),
    ("DA", "淡奶油", "Whipping Cream", "L", "1L×12盒/箱 35.1%", "48.00"),
    ("DA", "全脂牛奶", "Whole Milk", "L", "1L×12盒/箱", "11.50"),
    ("DA", "全脂奶粉", "Whole Milk Powder", "kg", "25kg/袋", "42.00"),
    ("DA", "脱脂奶粉", "Skimmed Milk Powder", "kg", "25kg/袋", "36.00"),
    ("DA", "奶油奶酪", "Cream Cheese", "kg", "2kg×6块/箱", "78.00"),
    ("DA", "马斯卡彭奶酪", "Mascarpone", "kg", "500g×12盒/箱", "96.00"),
    ("DA", "炼乳", "Condensed Milk", "kg", "1kg×12罐/箱", "21.00"),
    ("DA", "酸奶", "Plain Yogurt", "kg", "1kg×12桶/箱", "16.00"),
    ("DA", "马苏里拉奶酪", "Mozzarella", "kg", "2.5kg×4条/箱", "58.00"),
    ("DA", "乳清粉", "Whey Powder", "kg", "25kg/袋", "14.50"),
    ("EG", "鲜鸡蛋", "Fresh Eggs", "kg", "散装 约60g/枚", "11.80"),
    ("EG", "全蛋液", "Liquid Whole Egg", "kg", "10kg/桶 巴氏杀菌", "14.20"),
    ("EG", "蛋黄液", "Liquid Egg Yolk", "kg", "10kg/桶", "26.00"),
    ("EG", "蛋白液", "Liquid Egg White", "kg", "10kg/桶", "12.40"),
    ("EG", "全蛋粉", "Whole Egg Powder", "kg", "20kg/箱", "56.00"),
    ("EG", "蛋白粉", "Egg White Powder", "kg", "20kg/箱", "88.00"),
    ("EG", "咸蛋黄", "Salted Egg Yolk", "pcs", "100枚/盒", "1.20"),
    ("EG", "鹌鹑蛋", "Quail Eggs", "kg", "5kg/箱", "22.00"),
    ("EG", "鸭蛋", "Duck Eggs", "kg", "散装", "13.60"),
    ("EG", "冷冻蛋液", "Frozen Liquid Egg", "kg", "10kg/桶 -18°C", "12.80"),
    ("EG", "蛋黄粉", "Egg Yolk Powder", "kg", "20kg/箱", "74.00"),
    ("EG", "溏心蛋", "Soft-boiled Eggs", "pcs", "30枚/盒", "1.80"),
    ("FO", "大豆油", "Soybean Oil", "L", "20L/桶", "10.60"),
    ("FO", "玉米油", "Corn Oil", "L", "20L/桶", "13.20"),
    ("FO", "葵花籽油", "Sunflower Oil", "L", "20L/桶", "14.80"),
    ("FO", "起酥油", "Shortening", "kg", "20kg/箱", "16.40"),
    ("FO", "人造奶油", "Margarine", "kg", "20kg/箱", "15.60"),
    ("FO", "猪油", "Lard", "kg", "15kg/箱", "18.00"),
    ("FO", "椰子油", "Coconut Oil", "kg", "18kg/桶", "26.00"),
    ("FO", "橄榄油", "Olive Oil", "L", "5L/桶 特级初榨", "72.00"),
    ("FO", "棕榈油", "Palm Oil", "kg", "20kg/箱", "11.40"),
    ("FO", "花生油", "Peanut Oil", "L", "20L/桶", "19.80"),
    ("FO", "黄油风味起酥油", "Butter-flavoured Shortening", "kg", "20kg/箱", "19.20"),
    ("FO", "喷雾脱模油", "Release Spray", "pcs", "600mL/罐", "28.00"),
    ("FO", "可可脂", "Cocoa Butter", "kg", "25kg/箱", "120.00"),
    ("LE", "高糖酵母", "Instant Yeast (High Sugar)", "kg", "500g×20包/箱", "42.00"),
    ("LE", "低糖酵母", "Instant Yeast (Low Sugar)", "kg", "500g×20包/箱", "40.00"),
    ("LE", "鲜酵母", "Fresh Yeast", "kg", "500g×20块/箱 冷藏", "18.00"),
    ("LE", "泡打粉", "Baking Powder", "kg", "2.7kg/罐 无铝", "32.00"),
    ("LE", "小苏打", "Baking Soda", "kg", "25kg/袋", "6.00"),
    ("LE", "臭粉", "Ammonium Bicarbonate", "kg", "25kg/袋", "5.40"),
    ("LE", "塔塔粉", "Cream of Tartar", "kg", "1kg/罐", "58.00"),
    ("LE", "天然酵种", "Sourdough Starter", "kg", "1kg/袋 冷藏", "45.00"),
    ("LE", "半干酵母", "Semi-dry Yeast", "kg", "500g×20包/箱 冷冻", "52.00"),
    ("LE", "双效泡打粉", "Double-acting Baking Powder", "kg", "1kg/袋", "26.00"),
    ("LE", "酒石酸氢钾", "Potassium Bitartrate", "kg", "1kg/袋", "62.00"),
    ("LE", "面包酵素", "Bread Enzyme Blend", "kg", "1kg/袋", "85.00"),
    ("LE", "甜面团酵母", "Sweet Dough Yeast", "kg", "500g×20包/箱", "44.00"),
    ("FV", "香草精", "Vanilla Extract", "L", "1L/瓶", "260.00"),
    ("FV", "香草荚", "Vanilla Beans", "pcs", "50根/包 马达加斯加", "12.00"),
    ("FV", "肉桂粉", "Ground Cinnamon", "kg", "1kg/袋", "48.00"),
    ("FV", "抹茶粉", "Matcha Powder", "kg", "1kg/袋 宇治", "220.00"),
    ("FV", "可可粉", "Cocoa Powder", "kg", "25kg/袋 碱化", "46.00"),
    ("FV", "咖啡粉", "Instant Coffee", "kg", "1kg/袋", "120.00"),
    ("FV", "柠檬汁", "Lemon Juice", "L", "1L/瓶", "28.00"),
    ("FV", "朗姆酒", "Rum", "L", "700mL/瓶", "95.00"),
    ("FV", "食盐", "Salt", "kg", "25kg/袋 精制", "2.80"),
    ("FV", "海盐", "Sea Salt Flakes", "kg", "1kg/袋", "38.00"),
    ("FV", "黑芝麻粉", "Black Sesame Powder", "kg", "5kg/袋", "32.00"),
    ("FV", "红曲粉", "Red Yeast Rice Powder", "kg", "1kg/袋", "65.00"),
    ("FV", "黄油香精", "Butter Flavour", "kg", "1kg/瓶", "110.00"),
    ("PK", "面包袋", "Bread Bags", "pcs", "30×45cm 1000个/箱", "0.12"),
    ("PK", "蛋糕盒", "Cake Boxes 8 inch", "pcs", "8寸 100个/箱", "2.60"),
    ("PK", "纸杯", "Paper Baking Cups", "pcs", "5cm 2000个/箱", "0.05"),
    ("PK", "吐司盒", "Toast Boxes", "pcs", "450g 200个/箱", "0.85"),
    ("PK", "月饼盒", "Mooncake Gift Boxes", "pcs", "6粒装 50个/箱", "8.50"),
    ("PK", "封口贴", "Seal Stickers", "pcs", "1000张/卷", "0.02"),
    ("PK", "油纸", "Baking Paper", "pcs", "40×60cm 500张/箱", "0.30"),
    ("PK", "标签纸", "Label Rolls", "pcs", "60×40mm 1000张/卷", "0.03"),
    ("PK", "瓦楞纸箱", "Corrugated Cartons", "pcs", "60×40×30cm", "3.20"),
    ("PK", "脱氧剂", "Oxygen Absorbers", "pcs", "30cc 1000包/箱", "0.08"),
    ("PK", "干燥剂", "Desiccant Sachets", "pcs", "5g 1000包/箱", "0.04"),
    ("PK", "手提袋", "Carrier Bags", "pcs", "中号 500个/箱", "0.45"),
    ("PK", "蛋挞托", "Tart Foil Cups", "pcs", "1000个/箱", "0.09"),
    ("NS", "杏仁片", "Sliced Almonds", "kg", "10kg/箱", "72.00"),
    ("NS", "核桃仁", "Walnut Kernels", "kg", "10kg/箱", "58.00"),
    ("NS", "腰果", "Cashews", "kg", "10kg/箱", "76.00"),
    ("NS", "夏威夷果", "Macadamia Nuts", "kg", "10kg/箱", "125.00"),
    ("NS", "开心果仁", "Pistachio Kernels", "kg", "5kg/箱", "165.00"),
    ("NS", "榛子仁", "Hazelnut Kernels", "kg", "10kg/箱", "88.00"),
    ("NS", "花生仁", "Peanut Kernels", "kg", "25kg/袋", "16.00"),
    ("NS", "白芝麻", "White Sesame", "kg", "25kg/袋", "22.00"),
    ("NS", "黑芝麻", "Black Sesame", "kg", "25kg/袋", "24.00"),
    ("NS", "南瓜子仁", "Pumpkin Seed Kernels", "kg", "10kg/箱", "42.00"),
    ("NS", "葵花籽仁", "Sunflower Seed Kernels", "kg", "10kg/箱", "28.00"),
    ("NS", "椰丝", "Desiccated Coconut", "kg", "10kg/箱", "26.00"),
    ("NS", "松子仁", "Pine Nuts", "kg", "5kg/箱", "220.00"),
    ("FR", "葡萄干", "Raisins", "kg", "10kg/箱 新疆", "24.00"),
    ("FR", "蔓越莓干", "Dried Cranberries", "kg", "11.34kg/箱", "38.00"),
    ("FR", "蓝莓酱", "Blueberry Jam", "kg", "1kg×12罐/箱", "32.00"),
    ("FR", "草莓果酱", "Strawberry Jam", "kg", "1kg×12罐/箱", "28.00"),
    ("FR", "红豆馅", "Red Bean Paste", "kg", "5kg/袋", "16.00"),
    ("FR", "莲蓉馅", "Lotus Seed Paste", "kg", "5kg/袋", "34.00"),
    ("FR", "芒果果泥", "Mango Purée", "kg", "1kg×10袋/箱 冷冻", "42.00"),
    ("FR", "冷冻蓝莓", "Frozen Blueberries", "kg", "10kg/箱", "36.00"),
    ("FR", "冷冻草莓", "Frozen Strawberries", "kg", "10kg/箱", "22.00"),
    ("FR", "糖渍橙皮", "Candied Orange Peel", "kg", "5kg/箱", "46.00"),
    ("FR", "椰浆", "Coconut Milk", "L", "1L×12盒/箱", "18.00"),
    ("FR", "芋泥馅", "Taro Paste", "kg", "5kg/袋", "26.00"),
    ("FR", "肉松", "Pork Floss", "kg", "2.5kg/袋", "78.00"),
    ("CH", "黑巧克力币", "Dark Chocolate Callets 70%", "kg", "2.5kg/袋", "118.00"),
    ("CH", "牛奶巧克力币", "Milk Chocolate Callets", "kg", "2.5kg/袋", "105.00"),
    ("CH", "白巧克力币", "White Chocolate Callets", "kg", "2.5kg/袋", "108.00"),
    ("CH", "耐烤巧克力豆", "Bake-stable Chocolate Chips", "kg", "10kg/箱", "62.00"),
    ("CH", "代可可脂巧克力", "Compound Chocolate", "kg", "5kg/箱", "38.00"),
    ("CH", "可可碎", "Cocoa Nibs", "kg", "1kg/袋", "96.00"),
    ("CH", "可可液块", "Cocoa Mass", "kg", "5kg/袋", "112.00"),
    ("CH", "巧克力酱", "Chocolate Spread", "kg", "3kg/桶", "54.00"),
    ("CH", "榛子巧克力酱", "Hazelnut Chocolate Spread", "kg", "3kg/桶", "66.00"),
    ("CH", "巧克力淋面", "Chocolate Glaze", "kg", "5kg/桶", "48.00"),
    ("CH", "黑巧克力棒", "Dark Chocolate Batons", "kg", "1.6kg/盒 烘焙用", "98.00"),
    ("CH", "红丝绒可可粉", "Red Velvet Cocoa Blend", "kg", "1kg/袋", "72.00"),
    ("AD", "面包改良剂", "Bread Improver", "kg", "1kg×10包/箱", "38.00"),
    ("AD", "蛋糕油", "Cake Emulsifier (SP)", "kg", "5kg/桶", "26.00"),
    ("AD", "单甘酯", "Glycerol Monostearate", "kg", "25kg/袋", "22.00"),
    ("AD", "山梨酸钾", "Potassium Sorbate", "kg", "25kg/袋 防腐剂", "34.00"),
    ("AD", "丙酸钙", "Calcium Propionate", "kg", "25kg/袋 防腐剂", "16.00"),
    ("AD", "吉利丁片", "Gelatin Sheets", "kg", "1kg/包 200Bloom", "185.00"),
    ("AD", "琼脂粉", "Agar Powder", "kg", "1kg/袋", "160.00"),
    ("AD", "黄原胶", "Xanthan Gum", "kg", "25kg/袋", "45.00"),
    ("AD", "柠檬酸", "Citric Acid", "kg", "25kg/袋", "9.80"),
    ("AD", "维生素C", "Ascorbic Acid", "kg", "25kg/袋", "48.00"),
    ("AD", "谷朊粉", "Vital Wheat Gluten", "kg", "25kg/袋", "15.00"),
    ("AD", "β-胡萝卜素", "Beta-Carotene Colour", "kg", "1kg/瓶", "240.00"),
    ("AD", "焦糖色", "Caramel Colour", "kg", "25kg/桶", "12.00"),
]

# The seed documents' own examples: these two must end at exactly these levels in the main warehouse.
FIXED_LEVELS = {("M001", "WH01"): Decimal("100"), ("M002", "WH01"): Decimal("50")}

START = date(2026, 5, 20)
DAYS = 182


def reorder_point(unit: str, cost: Decimal) -> Decimal:
    if unit == "pcs":
        return Decimal(rng.choice([200, 500, 1000, 2000]))
    base = 200 if cost < 15 else 80 if cost < 60 else 20
    return Decimal(base)


def q(value: float, unit: str) -> Decimal:
    if unit == "pcs":
        return Decimal(max(1, round(value)))
    return Decimal(str(round(value, 1))) or Decimal("0.5")


def movements_for(code: str, wh: str, unit: str, rop: Decimal, target: Decimal, outlet: str):
    """Forward-simulate deliveries and production issues, then settle on the target level."""
    rows = []
    level = Decimal(0)
    lot = float(rop) * rng.uniform(1.5, 3.0)
    day = START
    end = START + timedelta(days=DAYS)
    while day < end:
        if level < rop * Decimal("1.2"):
            amount = q(lot, unit)
            rows.append((day, code, wh, "inbound", amount, "", f"采购到货 Delivery PO-{day:%y%m%d}"))
            level += amount
        use = q(float(rop) * rng.uniform(0.1, 0.4), unit)
        if use <= level and use > 0:
            rows.append((day, code, wh, "outbound", -use, "", f"生产领料 Issued to {outlet}"))
            level -= use
        day += timedelta(days=rng.randint(3, 9))
    delta = target - level
    final_day = end + timedelta(days=1)
    if delta > 0:
        rows.append((final_day, code, wh, "inbound", delta, "", f"采购到货 Delivery PO-{final_day:%y%m%d}"))
    elif delta < 0:
        rows.append((final_day, code, wh, "outbound", delta, "", f"生产领料 Issued to {outlet}"))
    return rows


def main() -> None:
    OUT.mkdir(exist_ok=True)
    write("warehouses.csv", ["code", "name_zh", "name_en", "location"], WAREHOUSES)
    write("suppliers.csv", ["code", "name_zh", "name_en", "contact"], SUPPLIERS)
    write("categories.csv", ["code", "name_zh", "name_en"], [c[:3] for c in CATEGORIES])

    by_cat = {c[0]: c for c in CATEGORIES}
    materials, movements = [], []
    outlets = ["面包线 bread line", "蛋糕线 cake line", "月饼线 mooncake line", "西点线 pastry line"]
    for n, (cat, zh, en, unit, spec, cost) in enumerate(MATERIALS, start=1):
        code = f"M{n:03d}"
        _, _, _, home, suppliers = by_cat[cat]
        cost_d = Decimal(cost)
        rop = reorder_point(unit, cost_d)
        materials.append((code, zh, en, unit, spec, cat, rng.choice(suppliers), rop, cost))
        warehouses = [home] + (["WH01" if home != "WH01" else "WH02"] if rng.random() < 0.15 else [])
        for wh in warehouses:
            if (code, wh) in FIXED_LEVELS:
                target = FIXED_LEVELS[(code, wh)]
            elif rng.random() < 0.14:
                target = q(float(rop) * rng.uniform(0.1, 0.9), unit)  # below the reorder point
            else:
                target = q(float(rop) * rng.uniform(1.2, 4.0), unit)
            movements += movements_for(code, wh, unit, rop, target, rng.choice(outlets))

    movements.sort(key=lambda r: (r[0], r[1], r[2]))
    write(
        "materials.csv",
        ["code", "name_zh", "name_en", "unit", "spec", "category", "supplier", "reorder_point", "unit_cost"],
        materials,
    )
    write(
        "stock_movements.csv",
        ["date", "material", "warehouse", "movement_type", "quantity", "counterpart_warehouse", "reason"],
        [(d.isoformat(), *rest) for d, *rest in movements],
    )
    print(f"{len(materials)} materials, {len(movements)} movements written to {OUT}")


def write(name: str, header: list[str], rows) -> None:
    with (OUT / name).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


if __name__ == "__main__":
    main()
