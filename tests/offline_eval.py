"""The offline provider's evaluation set: staff requests with the tool and arguments they mean.

Each case is (request, expected tool or None for "no tool: answer directly", expected arguments
that must be present with these values). Used by tests/test_offline_provider.py and by
bench/offline_eval.py, which prints the accuracy reported in docs/providers.md.
"""

CASES = [
    # --- Chinese: find ---
    ("帮我查找面粉原料", "search_materials", {"keyword": "面粉"}),
    ("查一下糖", "search_materials", {"keyword": "糖"}),
    ("有没有黄油", "search_materials", {"keyword": "黄油"}),
    ("搜索巧克力", "search_materials", {"keyword": "巧克力"}),
    ("我们有哪些坚果", "search_materials", {"keyword": "坚果"}),
    ("查找奶油奶酪", "search_materials", {"keyword": "奶油奶酪"}),
    ("冷库里有哪些蛋品", "search_materials", {"keyword": "蛋品", "warehouse": "冷库"}),
    ("帮我找一下有盐黄油", "search_materials", {"keyword": "有盐黄油"}),
    ("找找酵母", "search_materials", {"keyword": "酵母"}),
    # --- Chinese: one material ---
    ("M001 详情", "get_material_detail", {"material": "M001"}),
    ("高筋面粉还有多少", "get_material_detail", {"material": "高筋面粉"}),
    ("低筋面粉的供应商是谁", "get_material_detail", {"material": "低筋面粉"}),
    ("抹茶粉的单价", "get_material_detail", {"material": "抹茶粉"}),
    ("全脂奶粉库存多少", "get_material_detail", {"material": "全脂奶粉"}),
    # --- Chinese: stats ---
    ("库存统计", "get_inventory_stats", {}),
    ("库存总值是多少", "get_inventory_stats", {}),
    ("主仓库的库存价值", "get_inventory_stats", {"warehouse": "主仓库"}),
    ("乳制品库存统计", "get_inventory_stats", {"category": "乳制品"}),
    # --- Chinese: low stock ---
    ("哪些原料库存不足", "list_low_stock", {}),
    ("有什么快用完了", "list_low_stock", {}),
    ("冷库有哪些缺货", "list_low_stock", {"warehouse": "冷库"}),
    ("需要补货的原料", "list_low_stock", {}),
    # --- Chinese: movements ---
    (
        "最近7天高筋面粉的出库记录",
        "get_stock_movements",
        {"material": "高筋面粉", "days": 7, "movement_type": "outbound"},
    ),
    ("本月入库记录", "get_stock_movements", {"days": 30, "movement_type": "inbound"}),
    ("查看M002的出入库流水", "get_stock_movements", {"material": "M002"}),
    ("今天的库存变动", "get_stock_movements", {"days": 1}),
    # --- Chinese: bookings ---
    (
        "高筋面粉出库20公斤",
        "record_stock_movement",
        {
            "material": "高筋面粉",
            "quantity": 20,
            "unit": "kg",
            "movement_type": "outbound",
            "warehouse": "主仓库",
        },
    ),
    (
        "领料低筋面粉5kg",
        "record_stock_movement",
        {"material": "低筋面粉", "quantity": 5, "unit": "kg", "movement_type": "outbound"},
    ),
    (
        "细砂糖入库100公斤",
        "record_stock_movement",
        {"material": "细砂糖", "quantity": 100, "movement_type": "inbound"},
    ),
    (
        "收货 无盐黄油 50 kg 到冷库",
        "record_stock_movement",
        {"material": "无盐黄油", "quantity": 50, "movement_type": "inbound", "warehouse": "冷库"},
    ),
    (
        "盘点调整 M001 数量 95 公斤",
        "record_stock_movement",
        {"material": "M001", "quantity": 95, "movement_type": "adjustment"},
    ),
    (
        "把20公斤高筋面粉从主仓库调拨到冷库",
        "record_stock_movement",
        {
            "material": "高筋面粉",
            "quantity": 20,
            "movement_type": "transfer",
            "warehouse": "主仓库",
            "to_warehouse": "冷库",
        },
    ),
    (
        "出库鲜鸡蛋 3 斤",
        "record_stock_movement",
        {"material": "鲜鸡蛋", "quantity": 3, "unit": "斤", "movement_type": "outbound"},
    ),
    # --- Chinese: purchasing ---
    (
        "申请采购低筋面粉500公斤",
        "create_purchase_request",
        {"material": "低筋面粉", "quantity": 500, "unit": "kg"},
    ),
    ("请购M031 200升", "create_purchase_request", {"material": "M031", "quantity": 200, "unit": "L"}),
    (
        "订购全脂奶粉 100kg，2026-12-01前到",
        "create_purchase_request",
        {"material": "全脂奶粉", "quantity": 100, "needed_by": "2026-12-01"},
    ),
    # --- Chinese: reports start with their data ---
    ("生成低库存报表", "list_low_stock", {}),
    ("导出面粉库存表格", "search_materials", {"keyword": "面粉"}),
    # --- Chinese: no tool ---
    ("你好", None, {}),
    ("谢谢", None, {}),
    ("你能做什么", None, {}),
    # --- English: find ---
    ("find flour", "search_materials", {"keyword": "flour"}),
    ("search for butter", "search_materials", {"keyword": "butter"}),
    ("do we have any cocoa powder", "search_materials", {"keyword": "cocoa powder"}),
    ("show me the chocolate materials", "search_materials", {"keyword": "chocolate"}),
    ("look up M010", "search_materials", {"keyword": "M010"}),
    ("which nuts do we stock", "search_materials", {"keyword": "nuts"}),
    ("find eggs in the cold store", "search_materials", {"keyword": "eggs", "warehouse": "冷库"}),
    ("find yeast", "search_materials", {"keyword": "yeast"}),
    # --- English: one material ---
    ("details of M001", "get_material_detail", {"material": "M001"}),
    ("how much bread flour do we have", "get_material_detail", {"material": "bread flour"}),
    ("what is the price of cake flour", "get_material_detail", {"material": "cake flour"}),
    ("tell me about whole milk powder", "get_material_detail", {"material": "whole milk powder"}),
    # --- English: stats ---
    ("inventory overview", "get_inventory_stats", {}),
    ("what is our total stock value", "get_inventory_stats", {}),
    ("stats for the main warehouse", "get_inventory_stats", {"warehouse": "主仓库"}),
    # --- English: low stock ---
    ("what is running low?", "list_low_stock", {}),
    ("which materials are below reorder point", "list_low_stock", {}),
    ("anything out of stock in the packaging store", "list_low_stock", {"warehouse": "包材仓"}),
    ("what are we short of", "list_low_stock", {}),
    # --- English: movements ---
    ("show stock movements for M001 last 7 days", "get_stock_movements", {"material": "M001", "days": 7}),
    ("recent deliveries", "get_stock_movements", {"movement_type": "inbound"}),
    ("history of cake flour this month", "get_stock_movements", {"material": "cake flour", "days": 30}),
    # --- English: bookings ---
    (
        "book out 20 kg M001",
        "record_stock_movement",
        {"material": "M001", "quantity": 20, "unit": "kg", "movement_type": "outbound"},
    ),
    (
        "book 20 kg of bread flour out",
        "record_stock_movement",
        {"material": "bread flour", "quantity": 20, "movement_type": "outbound"},
    ),
    (
        "receive 200 kg caster sugar",
        "record_stock_movement",
        {"material": "caster sugar", "quantity": 200, "movement_type": "inbound"},
    ),
    (
        "issue 3 L whole milk from the cold store",
        "record_stock_movement",
        {"material": "whole milk", "quantity": 3, "unit": "L", "warehouse": "冷库"},
    ),
    (
        "transfer 10 kg M002 from main warehouse to cold store",
        "record_stock_movement",
        {"material": "M002", "movement_type": "transfer", "warehouse": "主仓库", "to_warehouse": "冷库"},
    ),
    (
        "adjust M003 stock to 780 kg",
        "record_stock_movement",
        {"material": "M003", "quantity": 780, "movement_type": "adjustment"},
    ),
    # --- English: purchasing ---
    (
        "raise a purchase request for 500 kg cake flour",
        "create_purchase_request",
        {"material": "cake flour", "quantity": 500},
    ),
    ("order more M031, 100 L", "create_purchase_request", {"material": "M031", "quantity": 100, "unit": "L"}),
    # --- English: reports ---
    ("low stock report as a table", "list_low_stock", {}),
    # --- English: no tool ---
    ("hello", None, {}),
    ("thanks!", None, {}),
    ("what can you do?", None, {}),
]
