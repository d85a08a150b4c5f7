"""The words the offline assistant acts on: the verbs of each movement direction, of a question, a
search, a report, a refusal, teaching, transfers and stocktakes, and the request words that are never
part of a material's name. Plain regular expressions, zh and en side by side, so one list says what
it recognises; understanding.py and linking.py decide with them.
"""

import re

# Stock lost on the floor (打翻了半桶, "3 cans got crushed, write them off"): it left the stock, so a
# loss told with an amount is booked out.
LOSS = (
    r"打翻|打碎|摔碎|摔坏|摔了|碎了|洒了|撒了|漏了|泼了|倒掉|扔掉|扔了|发霉|变质|"
    r"\bspill(?:ed|t)?\b|\bdropped\b(?!\s+(?:below|under|to|by|off)\b)|\bbroken?\b|\bsmashed\b|\bcrushed\b|"
    r"\bknocked over\b|\bleak(?:ed|ing)?\b|\bruined\b|\bbinned\b|\bth(?:rew|rown) (?:out|away)\b|\bwrite (?:it|them) off\b"
)
OUT = (
    r"出过?库|领|用了|用掉|用去|用过|使用|用量|发料|发了|出了|发出|出货|发货|拿[了过走去]|取[了过走]|扣掉|扣减|消耗|报废|报损|损耗|"
    r"出[个下]库|出一下库|book(?:ed|ing)? out|\bbook(?:ed|ing)?\s+(?:(?!in\b)\w+\s+){1,3}out\b|\bpick(?:ed|ing|s)?\b(?! up\b)|\bt(?:ake|akes|ook|aken|aking) out\b|used|usage|issued?|took|taken|went out|gone out|goes out|moved out|left the warehouse|outbound|"
    r"consum|sent out|dispatch|ship(?:ped|s)? out|\bpull(?:ed|ing)?\b|deduct|write off|wrote off|written off|wasted|"
    r"spoil|damaged|\buse\b|\bouts\b|退(?:货)?给?供应商|returned? to (?:the )?supplier|"
    rf"{LOSS}|退货|\bback to (?:the )?(?:supplier|vendor)\b|^\s*out\b(?!\s+of\b)|"
    r"(?<![\u4e00-\u9fff])出(?![\u4e00-\u9fff])|(?<=[库仓])出(?![\u4e00-\u9fff])|(?<=[库仓])出的"
)
IN = (
    r"(?<![\u4e00-\u9fff])入(?![\u4e00-\u9fff])|入过?库|入[个下]库|入一下库|入了|入过|进仓|到货|刚到|(?<!送)到的|收货|收到|收了|收的|签收|进了|进过|进来|进货|进库|到了|来了|送来|送到|补了|上架|"
    r"退库|退料|退回(?!\S{0,3}供应商)|book(?:ed|ing)? in\b|\bbook(?:ed|ing)?\s+(?:(?!out\b)\w+\s+){1,3}in\b(?!\s+(?:the\s+)?(?:system|ledger|cold|main|packaging|warehouse|store|wh))|incoming|\breceipts?\b|\bin yet\b|\bturned up\b|\bdid (?:we|you|they) get\b|进来|\bc(?:ame|ome|omes|oming) in(?:to)?\b|\b(?:finally|just|has|have|it) (?:came|come)\b(?! out| back| by| over| round| around| and| to)|arriv|receiv|reciev|deliver|inbound|got in|\bgot\b.{0,40}?\bin\b(?=\s*(?:$|[,.;!，。]|for\b|today\b|this\b|yesterday\b|just now\b))|put away|stock in|"
    r"卸完|卸了|卸货|卸车|\bunload(?:ed|ing)?\b|\boff the (?:truck|lorry|van)\b|"
    r"restocked|\brcv(?:e?d)?\b|\brec(?:ei)?v?d\b|到的货|\bgrns?\b|returned to (?:the )?(?:store|stock|warehouse)"
)
# Goods coming back to our stock ("多了两袋没用完，退回仓库"): inbound, whatever was taken before. Said
# with where they come back to, and not "不用还回" or "don't put back".
_NOT_BACK = r"(?<!不用)(?<!不要)(?<!别)(?<!不)(?<!没)(?<!don't )(?<!do not )(?<!no need to )(?<!not )"
RETURNED = (
    rf"{_NOT_BACK}(?:退库|退料)|{_NOT_BACK}(?:退回|还回|放回|送回)(?:到)?\s*(?:主仓库|主仓|冷库|包材仓|仓库|库房|库里)|"
    rf"{_NOT_BACK}\b(?:returned|put|brought|bring|took|taken)\s+(?:\w+\s+){{0,5}}?back\s+(?:in|into|to)\s+(?:the\s+)?"
    r"(?:store|stock|warehouse|shelf|shelves|main warehouse|cold store)\b|"
    # "the line returned 3 cases to the cold store": where to is ours, so it came back
    rf"{_NOT_BACK}\breturned\s+(?:\w+\s+){{1,8}}?(?:to|into)\s+(?:the\s+)?(?:store|stock|warehouse|main warehouse|cold store)\b"
)
# What someone says it is not ("不是20桶，是30桶", "not the bread flour, the cake flour"): not read.
NEGATED = (
    r"不是\s*[^，,。；;：:！!？?]{1,15}?\s*[，,]\s*(?:而)?(?=是)|"
    # "not the X, the Y", "not 20 but 30": a correction, not "not all of it came"
    r"\bnot (?:the|that|this) [^,;.!?]{1,30}?(?:,\s+|\s+but\s+)(?:it'?s\s+)?(?=the |that |this )|"
    r"\bnot \d[\d.]*\s*\w{0,6}(?:,\s+|\s+but\s+)(?=\d)"
)
# A clause that only sets the scene for the question ("Before I book it out, how much lard is there?",
# 出库之前，先看看还有多少): not read as the request.
SCENE = (
    r"^\s*(?:before|until) (?:i|we|you) [^,，;?？]{1,40}[,，]\s*(?=\S)|"
    r"^\s*(?![^，,]*?(?:周|月|天|日|号|昨|今|前天|上次|下班|早上|晚上|点))[^，,;?？。]{1,12}(?:之前|以前)\s*[，,]\s*(?=\S)"
)
# Asked about what happened, not told to do it ("谁收的", "when did it last come in", "did the butter
# come in today?"): with a movement's verb and no amount, the movements are the answer.
EVENT_ASKED = (
    r"谁|什么时候|啥时候|哪天|几号|几时|了没|了吗|[进来到收过]没有?\s*[?？]?\s*$|没有\s*[?？]|"
    r"^\s*(?:did|has|have|had|was|were)\b.{0,40}\b(?:come|came|arrived|received|delivered|taken|used|booked|moved|left|turned up)\b|"
    r"\b(?:who|when)\b.{0,40}\b(?:come|came|arrived|received|delivered|taken|used|booked|moved|left|turned up)\b|"
    r"\bin yet\b|\bturned up\b|\b(?:whether|if)\b.{0,40}\b(?:was|were|has|have|had|came|got)\b"
)
# Movements named as records ("the mascarpone transfers", "deliveries of butter"): their history.
RECORD_NOUNS = r"\b(?:transfers|deliveries|receipts|bookings|adjustments|stocktakes|movements)\b"
# ...but not what is left ("have we used up all the mascarpone?") or what is still to happen.
NOT_AN_EVENT = (
    r"used up|run out|ran out|用完|用光|\bshould\b|\bwill\b|going to|tomorrow|明天|快过期|"
    r"\b(?:quote|invoice|email|call|message|letter)\b[^.?!]{0,15}\b(?:received|got)\b|收到的?报价"
)
# What has been going on with something ("what's been happening with the yeast over the past 5
# days", 这周黄油有什么动静): its movements in that time.
ACTIVITY = r"happen(?:ing|ed)|activity|going on|动静|动过|变动|进出情况|走动"
# A request put as a question ("can you move…?", "麻烦帮我调一下…"): still a request.
# Checking something ("can you check whether…", 帮我确认一下…收到没有) asks; it does not act.
CHECKING = r"\b(?:check|see|confirm|find out|look up|tell me|whether)\b|\bif\b(?! possible)|确认|看看|查一下|查查|看一下|拉一下"
POLITE_ASK = (
    r"\b(?:can|could|would|will) you(?: please| pls)?(?: do\b)?|\bplease\b|\bpls\b|帮我|帮忙|麻烦|能不能|可以帮|可不可以|有空的?时候|"
    r"\bwhen you (?:get|have) a (?:chance|moment|sec(?:ond)?|minute)\b|\bat your convenience\b|\bif (?:at all )?possible\b"
)
QUESTION = r"[?？]|吗|呢|哪|什么|谁|几|多少|是否|有没有|了没|\b(what|whats|which|who|how|hows|when|did|does|do|any|show|list|history)\b"
SEARCH = r"搜|查找|找找|列出|有哪些|哪几种|哪些种|各种|what kinds? of|which \w+ do we (?:have|stock)|\bsearch\b|\bfind\b|look for|\blist\b|anything with"
# Asking for the kinds of something: a search, not the figures of the warehouse.
KINDS = r"(?:各种|哪几种|哪些种|几种)(?!原料|材料|物料|东西|货)|what kinds? of|which kinds? of|what types? of"
# Every kind of what is named ("泡打粉两种都还有吗", "all the flours, the lot"): a search.
EVERY_KIND = (
    r"[两几各多]种|都有哪|哪几种|所有的?|全部的?|\b(?:all|both|every) (?:the )?(?:kinds|types|sorts|of them|varieties)\b|"
    r"\bthe lot\b|\bwhatever (?:kinds?|types?) we\b|\bevery \w+ we (?:have|carry|stock)\b"
)
# Figures asked for, not a list: money, totals ("统计一下各种面粉的库存金额").
FIGURES = r"总值|金额|价值|多少钱|值多少|统计|一共|总共|\b(?:value|worth|total)\b"
# "Do we have any …": asked of something the catalogue may not name, a search says what matches.
ANY = r"有没有|有吗|\bdo we (?:have|stock|carry)\b|\bgot any\b|\bany\b"
# "Only what we have": a search limited to materials in stock.
ON_HAND = r"in stock only|only in stock|on hand|we (?:actually )?have|有货的|现货|在库的|有库存的"
REPORT = r"报表|表格|一个表|张表|成表|个表|列表|导出|清单|report|table|csv|export|spreadsheet|markdown"
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
    r"(?:别|不要|不|别再)留(?:下)?(?:记录|痕迹)|不留痕|神不知鬼不觉|"
    r"\bleave no (?:trace|record|paper trail)\b|\bwithout (?:leaving )?a trace\b|\boff the books\b|"
    # ...or booking what did not happen, to make the books look right
    r"账做平|做平账|假账|做假账|应付审计|糊弄审计|(?:还没|没有?)到货?.{0,12}(?:先|就)(?:入库|入账|登记)|"
    r"少记|多记|拿回家|没人会发现|不会有人发现|\bnobody (?:will|would) (?:notice|know)\b|\btake (?:it|them|some) home\b|"
    r"\bcook(?:ing)? the books\b|\bfake (?:a |the )?(?:booking|delivery|receipt|entry)\b|"
    r"\b(?:hasn't|has not|haven't|didn't) (?:arrived|come)\b.{0,40}\b(?:book|log)\b.{0,30}\b(?:anyway|audit)\b|"
    # ...or booking in someone else's name, or stock sold privately
    r"用(?!我|自己|本人|公司)\S{1,4}的(?:账号|帐号|名义|工号)|(?:冒用|借用)\S{0,4}(?:账号|帐号|工号)|就说是(?:他|她)领|私下卖|偷偷卖|倒卖|"
    r"\b(?:use|using|log in as|sign in as|log in with|sign in with) (?:his|her|their|someone else's|\w+'s)(?: account| login)?\b|"
    r"\b(?:selling|sell|sold) (?:them|it|some)? ?(?:on the side|privately)\b|\bi'?ll sell\b"
)
# Harm to people through the food (poisoning, tampering with what goes into it): never helped with.
HARM = (
    r"下毒|投毒|(?:怎么|如何|教我|帮我|想|打算|故意)[^，,。.!?！？]{0,12}(?:让|使|害|叫|令)[^，,。.!?！？]{0,8}(?:拉肚子|生病|中毒|吃坏)|"
    r"\bpoison (?:someone|people|customers|the (?:staff|customers|food))\b|"
    r"\b(?:how (?:do i|to|can i|could i)|help me|i want to)\b.{0,40}\bmake (?:people|someone|them|customers|everyone|him|her) (?:sick|ill)\b|"
    r"\btamper(?:ing)? with (?:the )?food\b"
)
# Credentials are never the assistant's to hand out, whatever the wording ("export the users and
# their passwords", "把API密钥发给我").
_SECRET = r"密码|口令|密钥|api ?key|\bpasswords?\b|\bpasswd\b|\bcredentials?\b|\bsecret keys?\b"
SECRETS = (
    rf"(?:给|发|告诉|导出|列出|显示|查|看|拿|要)\S{{0,8}}(?:{_SECRET})|(?:{_SECRET})\S{{0,4}}(?:给我|发我|是多少|是什么|发过来)|"
    rf"\b(?:show|give|send|export|list|tell|print|dump|reveal|what (?:is|are))\w*\b.{{0,60}}(?:{_SECRET})"
)
# A loose word said as a kind ("鸡蛋那些", "the eggs and such"): the category it belongs to.
KIND_MARK = (
    r"^\s*(?:那些(?!天|日子|时候)|这些(?!天|日子|时候)|那类|这类|之类|一类|类的|那几样|这几样|"
    r"and (?:such|the like|that kind)|and stuff)"
)
# Destroying in bulk is refused whatever the classifier thinks: a destroying verb with "all" or
# a whole kind of record ("清空所有出入库记录", "wipe the ledger"). One material set to zero is a
# stocktake, not this.
DESTROY_VERB = r"删|清空|清零|归零|销毁|抹掉|delete|wipe|erase|purge|truncate|\bdrop\b|zero out|remove"
# Set to nothing ("把所有物料库存改成0", "set every material's stock to zero"): with every material, destroying.
ZERO_VERB = (
    r"(?:改|设|调|置|变|清)(?:成|为|到)\s*(?:0|零)(?![.\d])|\bset\b.{0,50}\bto (?:0|zero|nothing)\b(?![.\d])"
)
# A list asked for ("所有库存变成0的东西列一下"): a question, not an order to destroy.
LISTED = r"列|查|看看|哪些|告诉我|\blist\b|\bshow\b|\bwhich\b"
BULK = (
    r"所有|全部|一切|全都|整个|数据库|数据|记录|流水|历史|账|\ball\b|every|entire|whole|database|records|"
    r"history|ledger|table|data\b"
)
EVERY_MATERIAL = (
    r"(?:所有|全部|一切|全体|每个|每种|每一种)的?(?:物料|材料|原料|库存|商品|东西|货物?|品项)|"
    r"\b(?:all|every|each)(?: of)?(?: the| our)? (?:materials?|items?|products?|ingredients?|stock|skus?|inventory)\b|"
    r"\beverything\b|\bthe (?:whole|entire) (?:stock|inventory|warehouse)\b"
)
TEACH = (
    r"以后我说|以后(?:有人|谁|大家|我们|员工)?(?:再)?(?:跟你|对你|和你|给你)?(?:说|问|提到|讲|打\s*[“\"'‘「])|(?<!请)教(?!我|下我|一下我)(?:下|一下|教)?\S{0,4}?(?:助手|你|它|系统|机器人)|我说.{0,12}(就是|意思是)|when (i|someone|people|staff|anyone) (say|says|type|types|write|writes|ask|asks)|"
    r"(?:新增|新建|添加|增加|创建|建|加)\s*(?:一|1)?\s*(?:个|条)?\s*(?:新的?)?\s*(?:意图|intent)|教你|学一个|学会|"
    r"teach (?:the )?(?:\w+ )?(?:bot|assistant|system|it)|teach (?:the |a |this )?(?:phrase|word|keyword)s?\b|"
    r"\bmake (?:the |our )?(?:\w+ )?(?:bot|assistant|system|it) (?:understand|learn|know|recogni[sz]e)|"
    r"让(?:它|助手|系统|机器人)(?:学会|记住|知道|明白)|^\s*(?:new )?intent\s*[:：]|^\s*(?:新)?意图\s*[:：]|"
    r"^\s*teach\s*[:：]|\bset up (?:a |the |this )?(?:keyword|phrase|shortcut|intent|synonym)|"
    r"\bmake ['\"“‘][^'\"”’]{1,40}['\"”’] (?:book|go|run|open|show|mean|trigger|raise|list)|"
    r"(加|添加|增加|新增)(一个|个)?(关键词|关键字|说法|同义词)|intent (called|named)|new intent|"
    r"add (an |a new |a )?intent|create (a new |an )?intent|teach you|"
    r"add (a |the |this |new )?(keyword|phrase|synonym)s?\b|new (keyword|phrase|synonym)s?\b|"
    # "map that phrase to the report formatter", "staff keep typing 'where's the'… set that up so…"
    r"\bmap (?:that|this|the|these|those|it)(?: phrases?| words?)? to\b|\bset (?:that|it|this) up so\b|"
    r"\bkeeps? (?:typing|saying|writing) ['\"“‘]|when (?:they|people|staff|someone|users?) (?:type|say|write)s? ['\"“‘]|"
    r"(?:说|打|输入)\s*[“\"'‘「][^”\"'’」]{1,20}[”\"'’」]\s*(?:的时候|时)?\s*(?:就|都)?(?:当成|当作|算作|走|查)|"
    # "大家打'找货'或者'find stuff'的时候，你就帮他们去搜物料，学一下"
    r"(?:说|打|输入|问)\s*[“\"'‘「][^”\"'’」]{1,20}[”\"'’」].{0,30}?(?:的时候|时)\s*[，,]?\s*你?就|"
    r"[“\"'‘「][^”\"'’」]{1,20}[”\"'’」].*[，,。\s](?:学一下|学着点|记住了?)\s*[。.!！吧]?\s*$"
)
# Asking whether the lesson was taken ("能记住吗", "got it?"): not a question about the phrase.
LESSON_CHECK = r"(?:能|可以)?(?:记住|记得住|学会|明白|懂)了?吗|好吗|行吗|可以吗|ok\?|got it\?"
TRANSFER = (
    r"调拨|移库|调到|转仓|移仓|调仓|调库|转库|倒库|挪到|搬到|transfer|\bxfe?r\b|relocat|\bmov(?:e|ed|ing)\b(?!\s+out)|"
    # "shift" as a verb with a place to go ("shift 20 kg to the cold store"), never a work shift
    r"(?<![-\w])(?<!day )(?<!night )(?<!late )(?<!early )(?<!morning )(?<!afternoon )(?<!evening )(?<!my )(?<!the )(?<!our )(?<!this )"
    r"shift(?:ed|ing)?\b(?=.{0,60}\b(?:to|into|from)\b)(?!\s+(?:lead|team|crew|manager|worker))"
)
# "Got 2 tubs of glucose syrup from Taikoo this morning", "we got another 4 rolls": a receipt, when
# nothing else in the request says which way (reading.direction) and it is not asked, taken from our
# own store, fetched for a line or thrown away.
GOT_IN = (
    r"^(?!.*[?？])(?!.*\b(?:for|down|ready|out|left|remaining|on hand|expired|bin(?:ned|ning)?|use[ds]?|from (?:the )?(?:main|cold|packaging|wh))\b)"
    r".*\bgot (?:another |in |an extra |(?:some |a )?(?:fresh|new) )?(?:\d|a (?:pallet|case|box|bag|tub|drum|roll|crate)\b)"
)
# Come in and put away in one breath ("蛋挞托到了五箱，已经搬到C栋了", "arrived, moved them to the
# cold store"): a receipt into that warehouse, not a transfer.
ARRIVED_AND_PUT = (
    r"(?:到了|到货|刚到|收到|送来|卸了|卸完|\barrived|\bcame in|\bdelivered|\breceived)[^。.!?？！]{0,24}?[，,;；]\s*"
    r"(?:已经|都|就|也|and|then|i|we|i've|we've)?\s*(?:已经|都|就)?\s*"
    r"(?:搬到|放到|放进|挪到|送到|搬进|\b(?:put|moved?|took|taken|brought) (?:them|it|'em) (?:in|into|to|over to)\b)"
)
ADJUST = r"盘点|调整|盘亏|盘盈|实盘|adjust|\badj\b|stocktake|counted|\bstock ?(?:check|count)\b"
# The records of movements, not a movement to make ("盘点调整记录", "transfer history").
RECORDS = r"(?:的|调整|盘点|出库|入库|调拨|领料|移库)记录|流水|明细|\b(?:records|history)\b"
# Asking what to buy, not buying something named ("我该买点啥", "what should we order?").
WHAT_TO_BUY = (
    r"(?:该|要|需要|得|应该)(?:买|采购|订|补)(?:点|些)?(?:啥|什么)|"
    r"\bwhat (?:should|do|must) (?:we|i) (?:buy|order)\b(?! last| yesterday)"
)
# A material's reorder level asked about: its detail, not an order.
REORDER_LEVEL = (
    r"补货点|再订货点|安全库存|最低库存|reorder (?:level|point|threshold)|re-order (?:level|point)|"
    r"min(?:imum)? (?:level|stock|qty|quantity)"
)
# Under a level: what is running low, not what the level is.
BELOW = r"低于|不到|不足|没到|快到|跌破|\b(?:below|under|beneath|less than|lower than|hit|reached|short of)\b"
# A list that is itself a booking: a pick list, a delivery note, a count sheet.
BOOKING_LIST = r"领料|到货|盘点|实际|\bbook\b|\bpick list\b|\bdelivery note\b|\bcount sheet\b"
# Ordering said as the verb with an amount ("50 cases ordered", 订购20箱).
ORDER_VERB = (
    r"\b(?:order|buy|purchase|reorder)(?:ed|ing)?\b|采购|订购|请购|下单|"
    r"(?:跟|找|向|问)供应商(?:要|订|拿|买)(?![^，,。]*?(?:报价|样品|发票|退款|价格|多少钱))"
)
# A level asked about as low.
LOW_WORDS = r"reorder|re-order|补货点|安全库存|最低库存|minimum|\bmin\b|threshold|par level"
# What the books say, before what was counted ("system says 36 kg but we only have 30", 账上是…实际…).
ON_THE_BOOKS = r"\bsystem (?:says|shows)|\bbooks? (?:says?|shows?)|\bon (?:the )?(?:system|books)|系统(?:上|里)?(?:显示|是|说)|账上|账面|电脑上"
# Buying: what a purchase request says.
BUY = (
    r"买|采购|(?:跟|找|向|问)供应商(?:要|订|拿)(?![^，,。]*?(?:报价|样品|发票|退款|价格|多少钱))|订|请购|补货|申请|\b(?:buy|purchase|procure|reorder|requisition|PR)\b|"
    r"(?<!the )(?<!our )(?<!this )(?<!that )(?<!end )(?<!weekend )(?<!customer )(?<!an )"
    r"\border\b(?!s?\s*(?:number|no\b|#))"
)  # "order 20 bags", never "the weekend order"
# Said of what is still to come: a purchase's delivery, not a booking now.
FUTURE = r"下月|下个月|下周|下星期|月初到|月底前|next (?:week|month)|\bby (?:mon|tue|wed|thu|fri|the end)"
# Moving goods once they have come: a purchase request's plan, not a transfer to book now.
ON_ARRIVAL = r"when (?:it|they) (?:lands?|arrives?|comes? in)|on arrival|once (?:it|they)(?:'s| is| are)? (?:arrives?|lands?|in)|到货后|到了以后|到了之后|到后"
# The verbs that tell the assistant to book (not nouns like 用量 or "usage"), by movement type.
ACTS_TRANSFER = (
    r"调拨|移库|转仓|移仓|调仓|调库|\btransfer\b|\bxfe?r\b|\bmove\b(?=.{0,60}\b(?:to|into|over to)\b)"
)
ACTS_ADJUST = r"盘点|实盘|\bstocktake\b|\bstock ?(?:count|check)\b"
ACTS_OUT = (
    r"出库|出[个下]库|出一下库|领用|领料|报损|\bbook(?:ed)?\s+(?:(?!in\b)\w+\s+){0,3}out\b|\bissue\b|\bpick\b(?! up\b)|"
    rf"{LOSS}|退(?:货)?给?供应商|退货|\b(?:back|return(?:ed)?) to (?:the )?(?:supplier|vendor)\b"
)
ACTS_IN = (
    r"入库|入[个下]库|入一下库|收货|退库|\bbook(?:ed)? in\b|\bbook\s+(?:(?!out\b)\w+\s+){1,3}in\b|\breceive\b"
)
# What is left of "芝士都有哪几种" / "which preservatives do we have" once the asking is taken away:
# the thing to search for when the catalogue linked nothing.
SEARCH_FILLER = (
    r"[\s?？!！。.,，、]|都|还|我们|咱们|库里|仓库里|仓库|库存|各种|有哪几种|有哪些|哪几种|哪些|有没有|有吗|相关的?|"
    r"的|吗|呢|啊|呀|帮我|一下|看看|什么|那个|这个|那种|这种|那些|这些|东西|有多少|剩多少|还剩|多少|的货|"
    r"\b(?:do|does|we|you|have|got|any|what|which|kinds?|types?|sorts?|of|is|are|there|the|in|stock|"
    r"show|me|list|search|find|for|all|our|please|pls)\b"
)
# Greetings and thanks around a request ("早上好 看下哪些要补货了 谢谢哈"): the classifier reads
# what is between them.
POLITE = (
    r"^\s*(?:早上好|上午好|下午好|晚上好|你好|您好|哈喽|嗨|hi|hello|hey|good morning|morning)[\s,，!！。.~]+|"
    r"[\s,，]*(?:谢谢(?:了|哈|啦|你|您)?|多谢|辛苦了|\bthanks?(?: you)?|\bthx|\bty)[\s!！。.~哈啊呀]*$"
)
# A warehouse named by its code or as a store of its own ("WH04", "warehouse 5", 成品仓): checked
# against the warehouses there are. What stands before 仓 must be a name, not 哪个 or 去.
WAREHOUSE_SAID = (
    r"\b(?:wh|warehouse)\s?-?\d{1,3}\b(?!\s*(?:days?|hours?|hrs?|mins?|minutes?|weeks?|months?|years?)\b)|"
    r"(?:(?<=^)|(?<=[\s，,。:：在从到去往的里回]))(?P<zh>[\u4e00-\u9fff]{2,3})仓(?![库位管])"
)
NOT_A_STORE_NAME = set(
    "我们咱整这那哪各每所全个的在从到去回进出入调本该别其同一两几上下里外前后大小新老原盘爆清满压补平号底天周月今昨明"
)
# A phrase in quotes (“保质期”, 'find stuff', 「缺料」): what is taught or quoted, not what is asked.
QUOTED = r"[“\"「『'‘][^”\"」』'’]{1,50}[”\"」』'’]"
# Characters that only join a sentence (有, 的, 都, 吗…): one stuck to a name's edge is no part of it
# ("黄油有哪些" is not 有盐黄油).
FUNCTION_CHARS = set("有的了是在和及与吗呢吧啊呀嘛哦还么啥这那都也就要")
# One word of a request, to count how much it says: an English word or one Chinese character.
WORD = r"[a-z]+|[\u4e00-\u9fff]"

# --- words that are never a material's name ------------------------------------------------------

# Request words: never part of a material's name in a request, in either language.
EN_STOP = set(
    """
    a an the please pls can could would you me i we our us my do does did is are was were be been what which
    how much many have has had of for in on to from at with and or all any some show list give tell about get
    material materials stock stocks stocked inventory level levels there left it out up now current currently
    today yesterday let see need needs want would like kg warehouse book booked booking items item raw
    ingredient ingredients details detail info information last past days day week month this that recent
    by as into onto off per each more less just got get put take took used use using received receive issue
    issued move moved transfer count counted stocktake adjust adjusted order ordered buy purchase request
    raise report table export summary total value worth cost price unit supplier supplies who where when
    why movement movements history ledger delivery deliveries arrived came went left running low short
    reorder below point need soon should carry carrying kinds kind type types everything anything else
    morning afternoon evening find search look looking check show me status please thanks thank hi hello
    category categories section new intent called phrase phrases means mean teach add create named name
    store room main cold packaging nothing something whats what's how's is it its their them those these
    here go going gone spec specs specification weigh weight litre litres liter liters l ml g t gram grams
    kilo kilos kilogram kilograms tonne tonnes ton tons pcs piece pieces wh whs
    still remain remaining available on-hand hand quantity amount number bread-line line production
    i'd i'm i'll we're we'd we've it's that's there's don't doesn't didn't let's you're isn't aren't
    anything activity happened happen done things thing stuff related lot lots bit ins outs
    stats stat wk wks exact exactly sure made call calls calling called match matches game games won
    hai you duoshao ma ne le de zai shi yao cha kan zhao bang wo women yixia haiyou ku cun kucun
    """.split()  # noqa: SIM905 (a word list reads better as words)
)
# Request words of two or more characters, removed before names are looked for in what is left.
ZH_STOP_WORDS = re.compile(
    "麻烦|请问|请帮|帮我|帮忙|一下|看看|看下|瞅瞅|查查|找找|查一下|找一下|看一看|结果|情况|登记|记录|现在|目前|当前|"
    "刚刚|刚才|今天|昨天|上午|下午|早上|晚上|我们|咱们|你们|他们|哪些|什么|多少|还有|还剩|剩下|有没有|是不是|"
    "一共|总共|所有|全部|相关|东西|原料|材料|物料|库存|仓库|数量|实际|只有|大概|左右|一批|一些|这批|那批|"
    "使用|用量|报表|表格|清单|统计|流水|明细|详情|信息|规格|单价|价格|供应商|补货点|安全库存|快用完|用完|"
    "出库|入库|领料|领用|收货|到货|调拨|盘点|采购|申请|订购|下单|请购|登记"
)
# Where goods go in the plant, not what they are: 给月饼线, 面包线领了, 烘焙车间, "for the cake line".
PRODUCTION_LINE = re.compile(
    r"(?:给|为|到|去|往|供|送)\s*[\u4e00-\u9fff]{1,4}?(?:生产线|产线|线|车间)|[\u4e00-\u9fff]{1,4}?(?:生产线|产线|车间)|"
    r"[\u4e00-\u9fff]{2}线(?=领|拿|要|用|取)|\b(?:for|to|on) the [a-z -]{1,20}? (?:line|bakery|kitchen)\b",
    re.I,
)
# Characters that are request words on their own (有 in 有盐黄油 is part of a name, 有 alone is not).
ZH_SINGLE_STOP = set(
    "有的了是在和及与个些点出入进用领到查找看要把从给帮请问呢吗吧啊呀嘛哦还多少几么啥这那一二两三四五六七八九十百千半袋箱桶包盒瓶罐件斤克升吨料货于低高生成做份种样类"
)


# Typos of the words requests turn on, read as meant ("pls ordr 500kg…", "main warehose").
TYPOS = {
    "ordr": "order", "oder": "order", "odrer": "order", "ordre": "order", "purchse": "purchase",
    "purchace": "purchase", "warehose": "warehouse", "warehoue": "warehouse", "wharehouse": "warehouse",
    "warehous": "warehouse", "transfr": "transfer", "tranfer": "transfer", "stocktak": "stocktake",
    "recieved": "received", "recived": "received", "delivred": "delivered", "arived": "arrived",
}  # fmt: skip
_TYPO = re.compile(r"\b(" + "|".join(TYPOS) + r")\b", re.I)


def typos_fixed(text: str) -> str:
    return _TYPO.sub(lambda m: TYPOS[m.group(1).lower()], text)


# Request words typed in pinyin ("xisha tang dao le 4 dai, ru ku"): read as the characters they
# stand for, so the verbs, packs and units are understood as if typed in Chinese. Names in pinyin
# are the linker's (the search index knows them). Only a request with no Chinese characters and
# two or more of these is read so.
_NUM = r"(?<=\d)\s*"
PINYIN_WORDS = [
    (r"\bru ?ku\b", "入库"), (r"\bchu ?ku\b", "出库"), (r"\bdao ?le\b", "到了"), (r"\bdao ?huo\b", "到货"),
    (r"\bshou ?dao\b", "收到"), (r"\bcai ?gou\b", "采购"), (r"\bling ?le\b", "领了"), (r"\bling ?yong\b", "领用"), (r"\byong ?le\b", "用了"),
    (r"\bna ?le\b", "拿了"), (r"\bdiao ?bo\b", "调拨"), (r"\bpan ?dian\b", "盘点"), (r"\bcai ?gou\b", "采购"),
    (r"\bhai ?(?:you|sheng) ?duo ?shao\b", "还有多少"), (r"\bduo ?shao\b", "多少"), (r"\bque ?huo\b", "缺货"),
    (r"\bbu ?huo\b", "补货"), (r"\bkuai ?(?:mei ?le|yong ?wan ?le?)\b", "快用完了"), (r"\bjin ?tian\b", "今天"),
    (r"\bzuo ?tian\b", "昨天"), (r"\bben ?zhou\b", "本周"), (r"\bzhe ?zhou\b", "这周"), (r"\bshang ?zhou\b", "上周"),
    (r"\bben ?yue\b", "本月"), (r"\bdou ?you\b", "都有"), (r"\bna ?ji ?zhong\b", "哪几种"),
    (r"\byou ?na ?xie\b", "有哪些"), (r"\byou ?mei ?you\b", "有没有"), (r"\bhai ?you ?ma\b", "还有吗"), (r"\bleng ?ku\b", "冷库"), (r"\bzhu ?cang\b", "主仓"),
    (r"\b(?:yi|liang|er|san|si|wu|liu|qi|ba|jiu|shi|ban)(?= ?(?:dai|xiang|tong|bao|ping|gong ?jin|jin|ke|dun|he|guan)\b)",
     None),  # a number said in pinyin before a pack or unit: its character (see from_pinyin)
    (r"(?<=[一两二三四五六七八九十半])\s*dun\b", "吨"), (r"(?<=[一两二三四五六七八九十半])\s*he\b", "盒"),
    (r"(?<=[一两二三四五六七八九十半])\s*guan\b", "罐"),
    (r"(?<=[一两二三四五六七八九十半])\s*(?:dai)\b", "袋"), (r"(?<=[一两二三四五六七八九十半])\s*xiang\b", "箱"),
    (r"(?<=[一两二三四五六七八九十半])\s*tong\b", "桶"), (r"(?<=[一两二三四五六七八九十半])\s*bao\b", "包"),
    (r"(?<=[一两二三四五六七八九十半])\s*ping\b", "瓶"), (r"(?<=[一两二三四五六七八九十半])\s*gong ?jin\b", "公斤"),
    (r"(?<=[一两二三四五六七八九十半])\s*jin\b", "斤"), (r"(?<=[一两二三四五六七八九十半])\s*ke\b", "克"),
    (_NUM + r"gong ?jin\b", "公斤"), (_NUM + r"dai\b", "袋"), (_NUM + r"xiang\b", "箱"), (_NUM + r"tong\b", "桶"),
    (_NUM + r"bao\b", "包"), (_NUM + r"jin\b", "斤"), (_NUM + r"ke\b", "克"), (_NUM + r"ping\b", "瓶"),
]  # fmt: skip
_PINYIN_RES = [(re.compile(p, re.I), hanzi) for p, hanzi in PINYIN_WORDS]


_PINYIN_DIGITS = {"yi": "一", "liang": "两", "er": "二", "san": "三", "si": "四", "wu": "五", "liu": "六", "qi": "七",
                  "ba": "八", "jiu": "九", "shi": "十", "ban": "半"}  # fmt: skip


def from_pinyin(text: str) -> str:
    """The request with its pinyin request words as characters, when it is typed in pinyin."""
    if re.search(r"[\u4e00-\u9fff]", text) or sum(bool(p.search(text)) for p, _h in _PINYIN_RES) < 2:
        return text
    for pattern, hanzi in _PINYIN_RES:
        text = pattern.sub(hanzi or (lambda m: _PINYIN_DIGITS[m.group(0).lower()]), text)
    return text
