"""The words the offline assistant acts on: the verbs of each movement direction, of a question, a
search, a report, a refusal, teaching, transfers and stocktakes. Plain regular expressions, zh and
en side by side, so one list says what it recognises; understanding.py decides with them.
"""

OUT = (
    r"出过?库|领|用了|用掉|用去|用过|使用|用量|发料|发了|出了|发出|拿[了过走去]|取[了过走]|扣掉|扣减|消耗|报废|报损|损耗|"
    r"book(?:ed|ing)? out|\bt(?:ake|akes|ook|aken|aking) out\b|used|usage|issued?|took|taken|went out|moved out|left the warehouse|outbound|"
    r"consum|sent out|ship(?:ped|s)? out|\bpull(?:ed|ing)?\b|deduct|write off|wrote off|written off|wasted|"
    r"spoil|damaged|\buse\b|\bouts\b|退(?:货)?给?供应商|returned? to (?:the )?supplier|"
    r"(?<![\u4e00-\u9fff])出(?![\u4e00-\u9fff])"
)
IN = (
    r"(?<![\u4e00-\u9fff])入(?![\u4e00-\u9fff])|入过?库|到货|收货|收到|收了|进了|进过|进来|进货|进库|到了|来了|送来|送到|补了|上架|"
    r"退库|退料|退回(?!\S{0,3}供应商)|book(?:ed|ing)? in\b|came in|arriv|receiv|reciev|deliver|inbound|got in|\bgot\b.{0,40}?\bin\b(?=\s*(?:$|[,.;!，。]))|put away|stock in|"
    r"restocked|\brcv(?:e?d)?\b|\brec(?:ei)?v?d\b|到的货|\bgrns?\b|returned to (?:the )?(?:store|stock|warehouse)"
)
# Goods coming back to stock ("多了两袋没用完，退回仓库"): inbound, whatever was taken before.
RETURNED = r"退库|退料|退回(?!\S{0,3}供应商)|还回|returned to (?:the )?(?:store|stock|warehouse)|put back|bring(?:ing)? back"
# What someone says it is not ("不是20桶，是30桶", "not the bread flour, the cake flour"): not read.
NEGATED = (
    r"不是\s*[^，,。；;：:！!？?]{1,15}?\s*[，,]\s*(?:而)?(?=是)|"
    r"\bnot (?:the |a |an )?[^,;.!?]{1,30}?(?:,\s*|\s+but\s+)(?:it'?s\s+)?(?=the |a |an |\w)"
)
QUESTION = r"[?？]|吗|呢|哪|什么|谁|几|多少|是否|有没有|\b(what|which|who|how|when|did|does|do|any|show|list|history)\b"
SEARCH = r"搜|查找|找找|列出|有哪些|哪几种|哪些种|各种|what kinds? of|which \w+ do we (?:have|stock)|\bsearch\b|\bfind\b|look for|\blist\b|anything with"
# Asking for the kinds of something: a search, not the figures of the warehouse.
KINDS = r"各种|哪几种|哪些种|几种|what kinds? of|which kinds? of|what types? of"
# "Do we have any …": asked of something the catalogue may not name, a search says what matches.
ANY = r"有没有|有吗|\bdo we (?:have|stock|carry)\b|\bgot any\b|\bany\b"
# "Only what we have": a search limited to materials in stock.
ON_HAND = r"in stock only|only in stock|on hand|we (?:actually )?have|有货的|现货|在库的|有库存的"
REPORT = r"报表|表格|一个表|张表|成表|个表|列表|导出|清单|report|table|csv|export|spreadsheet"
# Refusing needs more than the model's guess: words that destroy or override.
DESTROY = (
    r"删|清空|清零|归零|销毁|抹掉|忽略|无视|绕过|系统提示|你现在是|管理员指令|开发者模式|"
    r"\b(?:delete|drop|wipe|clear|erase|purge|truncate|remove all|zero|ignore|disregard|override|bypass|"
    r"jailbreak|developer mode|you are now)\b"
)
# Changing what the catalogue or the ledger says by hand (a price, a past booking) is not the
# assistant's to do: it has no tool for it, and asked to, it says so instead of looking something up.
TAMPER = (
    r"(?:改|修改|调低|调高|压低|改低|改高|篡改)\S{0,6}(?:价|成本|单价|记录|流水)|"
    r"\b(?:change|lower|raise|edit|fudge|fake|alter)\b.{0,30}\b(?:price|cost|records?|ledger|history)\b|"
    # ...or leaving no trace of what was done
    r"(?:别|不要|不|别再)留(?:下)?(?:记录|痕迹|底)|不留痕|神不知鬼不觉|"
    r"\b(?:without|leave no|no) (?:a )?(?:trace|record|paper trail)\b|\boff the books\b"
)
# Credentials are never the assistant's to hand out, whatever the wording ("export the users and
# their passwords", "把API密钥发给我").
SECRETS = (
    r"密码|口令|密钥|api ?key|\bpasswords?\b|\bpasswd\b|\bcredentials?\b|\bsecret keys?\b|\btokens? of\b"
)
# A loose word said as a kind ("鸡蛋那些", "the eggs and such"): the category it belongs to.
KIND_MARK = (
    r"^\s*(?:那些|这些|那类|这类|之类|一类|类的|那几样|这几样|and (?:such|the like|that kind)|and stuff)"
)
# Destroying in bulk is refused whatever the classifier thinks: a destroying verb with "all" or
# a whole kind of record ("清空所有出入库记录", "wipe the ledger"). One material set to zero is a
# stocktake, not this.
DESTROY_VERB = r"删|清空|清零|归零|销毁|抹掉|delete|wipe|erase|purge|truncate|\bdrop\b|zero out|remove"
BULK = (
    r"所有|全部|一切|全都|整个|数据库|数据|记录|流水|历史|账|\ball\b|every|entire|whole|database|records|"
    r"history|ledger|table|data\b"
)
TEACH = (
    r"以后我说|以后(?:有人|谁|大家|我们|员工)?(?:再)?(?:说|问|提到|讲)|(?<!请)教(?:下|一下|教)?(?:助手|你|它)|我说.{0,12}(就是|意思是)|when (i|someone|people|staff|anyone) (say|says|type|types|write|writes|ask|asks)|"
    r"(?:新增|新建|添加|增加|创建|建|加)\s*(?:一|1)?\s*(?:个|条)?\s*(?:新的?)?\s*(?:意图|intent)|教你|学一个|学会|"
    r"teach (?:the )?(?:bot|assistant|system|it)|"
    r"(加|添加|增加|新增)(一个|个)?(关键词|关键字|说法|同义词)|intent (called|named)|new intent|"
    r"add (an |a new |a )?intent|create (a new |an )?intent|teach you|"
    r"add (a |the |this |new )?(keyword|phrase|synonym)s?\b|new (keyword|phrase|synonym)s?\b"
)
TRANSFER = (
    r"调拨|移库|调到|转仓|移仓|调仓|调库|转库|倒库|挪到|搬到|transfer|\bxfe?r\b|relocat|\bmov(?:e|ed|ing)\b(?!\s+out)|"
    # "shift" as a verb with a place to go ("shift 20 kg to the cold store"), never a work shift
    r"(?<![-\w])(?<!day )(?<!night )(?<!late )(?<!early )(?<!morning )(?<!afternoon )(?<!evening )(?<!my )(?<!the )(?<!our )(?<!this )"
    r"shift(?:ed|ing)?\b(?=.{0,60}\b(?:to|into|from)\b)(?!\s+(?:lead|team|crew|manager|worker))"
)
ADJUST = r"盘点|调整|盘亏|盘盈|adjust|stocktake|counted"
# The records of movements, not a movement to make ("盘点调整记录", "transfer history").
RECORDS = r"记录|流水|明细|\b(?:records?|history|log)\b"
# Asking what to buy, not buying something named ("我该买点啥", "what should we order?").
WHAT_TO_BUY = r"买(?:点|些)?(?:啥|什么)|(?:订|采购)(?:点|些)?(?:啥|什么)|\bwhat (?:should|do|must) (?:we|i) (?:buy|order)"
# The verbs that tell the assistant to book (not nouns like 用量 or "usage"), by movement type.
ACTS_TRANSFER = r"调拨|移库|转仓|移仓|调仓|调库|\btransfer\b|\bxfe?r\b"
ACTS_ADJUST = r"盘点|\bstocktake\b|\bstock count\b"
ACTS_OUT = r"出库|领用|领料|报损|\bbook(?:ed)? out\b|\bissue\b"
ACTS_IN = r"入库|收货|退库|\bbook(?:ed)? in\b|\breceive\b"
# What is left of "芝士都有哪几种" / "which preservatives do we have" once the asking is taken away:
# the thing to search for when the catalogue linked nothing.
SEARCH_FILLER = (
    r"[\s?？!！。.,，、]|都|还|我们|咱们|库里|仓库里|仓库|库存|各种|有哪几种|有哪些|哪几种|哪些|有没有|有吗|相关的?|"
    r"的|吗|呢|啊|呀|帮我|一下|看看|什么|那个|这个|那种|这种|那些|这些|东西|"
    r"\b(?:do|does|we|you|have|got|any|what|which|kinds?|types?|sorts?|of|is|are|there|the|in|stock|"
    r"show|me|list|search|find|for|all|our|please|pls)\b"
)
# Greetings and thanks around a request ("早上好 看下哪些要补货了 谢谢哈"): the classifier reads
# what is between them.
POLITE = (
    r"^\s*(?:早上好|上午好|下午好|晚上好|你好|您好|哈喽|嗨|hi|hello|hey|good morning|morning)[\s,，!！。.~]+|"
    r"[\s,，]*(?:谢谢(?:了|哈|啦|你|您)?|多谢|辛苦了|\bthanks?(?: you)?|\bthx|\bty)[\s!！。.~哈啊呀]*$"
)
# One word of a request, to count how much it says: an English word or one Chinese character.
WORD = r"[a-z]+|[\u4e00-\u9fff]"
