"""The similarity floor of an embedding model, measured on pairs written for it.

A cosine means something only for the model that produced it: one model's
0.3 is another's 0.6. So the floor a semantic-only hit must reach is measured
for the model in use, when its vector index is created, and stored beside
the vectors (`VectorIndex.floor`): a change of model drops both and measures
again. The measurement embeds `PAIRS`, questions each answered by one short
note in other words (written for memdir, across the kinds of memory it
keeps), and sets the floor where a semantic-only hit is as close to its
query as the closest tenth of the true answers are (their 90th percentile),
and never below the closest unrelated pair (each question against the other
notes): a hit on meaning alone, with no word of the query to support it, must
be a strong match.

For all-MiniLM-L6-v2 the answering pairs' median is 0.44, their 90th
percentile 0.55 and the closest unrelated pair 0.50, so the floor is 0.55. On
`bench/precision.py`'s labelled memories that floor left semantic and hybrid
search with a no-answer false-hit rate of 7.7% (the lexical side's 5.8% and
one more; 11.5% at the answering median, 100% with no floor) at the same R@10;
with the long questions added, 12.2% against the lexical side's 8.1%. So a topic
file needs `semantic.SURE` (1.1) times the floor to be shown on its meaning alone
(8.1%, one answerable query fewer found), and a conversation's turn the floor:
on LoCoMo holding turns to 1.1 times it too would cost about 0.04 of R@10 (measured offline on the dev split).

A floor relative to the query's background in its memory (the best cosine less
the median over every file) was measured against this absolute one on the two
conversation corpora, each asked its own questions and others' with the speakers
renamed. It told them apart less well: with 85% of LoCoMo's own questions above
it, 60% of the others' were too, against 42%; on REALTALK 77% of its own and 61% of the others' against
84% and 57%.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .embed import numpy_module

VERSION = "3"  # bump when PAIRS or SCRIPT_PAIRS change, so that stored floors are measured again

PAIRS: tuple[tuple[str, str], ...] = (
    ("when does the new app go live?", "The public release is planned for 14 March, after two weeks of beta testing."),
    ("how long are generated reports kept before they expire?", "PDF exports stay in the cache for six hours, then they are rebuilt on request."),
    ("may I propose a darker colour scheme for the dashboard?", "Never suggest dark themes: the user finds light text on black unreadable."),
    ("how should I write commit messages?", "Start the subject with the ticket key, use the imperative mood, keep it under 72 characters."),
    ("is it fine to fake the database in unit tests?", "Tests run against a real PostgreSQL started in a container; no mocks of the driver."),
    ("who takes over the pager after Sam?", "On-call rotation: Sam this week, then Priya, then Tom; handover on Mondays at ten."),
    ("what is the password for the guest network?", "Visitors join the wifi called Garden-Guest; the key is written on the fridge."),
    ("what can't our daughter eat?", "Mia is allergic to tree nuts and sesame; check labels on bread and granola."),
    ("when do the bins get collected?", "Recycling goes out on Tuesday evenings; general waste every other Friday."),
    ("what time should I fetch the kids from school?", "Classes end at 15:20, except Wednesdays when they finish at 13:00."),
    ("how do I get a refund for an annual plan?", "Yearly subscriptions are refunded pro rata within 30 days of renewal; finance approves it."),
    ("why are text reminders not arriving in Ireland?", "SMS to Irish numbers fail since the carrier changed its sender ID rules in June."),
    ("what counts as an urgent incident?", "Priority one means the whole booking system is down for every customer."),
    ("how do I keep a sourdough starter healthy?", "Feed the levain daily with equal weights of flour and water and keep it somewhere warm."),
    ("what helps me sleep better?", "No screens after ten, a cool bedroom and magnesium tea help me drop off faster."),
    ("stretches after a run", "After jogging: hamstring and calf holds of thirty seconds each, then hip circles."),
    ("where can I test a change before it reaches customers?", "Every branch can be deployed to the staging cluster with one command before production."),
    ("how accurate is the delivery estimate model?", "The ETA predictor is off by nine minutes on average and is retrained every Sunday."),
    ("how long does Stripe retry a failed webhook?", "Stripe resends undelivered events with exponential backoff for up to three days."),
    ("who is my boss?", "I report to Dana Whitfield, head of platform engineering, since last spring."),
    ("which vet do we use for the cat?", "Whiskers is registered at Riverside Animal Clinic; her vaccinations are due in May."),
    ("when is the car due for its service?", "The Golf needs its annual inspection before the end of September."),
    ("what did we decide about the team offsite?", "We agreed to hold the offsite in Porto for three days in early October."),
    ("how do I restart the export worker?", "If exports hang, run systemctl restart export-worker and clear the queue."),
    ("what is the customer's preferred way to be contacted?", "Lakeside Physio wants updates by email only, never phone calls during clinic hours."),
    ("how big should the database connection pool be?", "pgbouncer runs in transaction mode with a pool of twenty connections per service."),
    ("what do I pack for a weekend trip?", "Packing list: charger, passport, rain jacket, two changes of clothes and a book."),
    ("what should I practise on guitar this month?", "Practice barre chords and the F major shape for fifteen minutes each evening."),
    ("what is the plan for the billing switch?", "Invoices move from Stripe to the new ledger on 1 April; Stripe stops billing that day."),
    ("how do I reset my two-step login?", "Lost your authenticator? An admin can clear second-factor enrolment from the user page."),
    ("what tone should replies to customers have?", "Answer support tickets warmly and briefly, with the customer's first name and no jargon."),
    ("which supermarket do we order from?", "The weekly shop is delivered by FreshCart on Thursday mornings between eight and ten."),
)


UNREAD = 2.0  # the floor of a script the model does not read: no cosine reaches it
READS = 0.75  # a model reads a script when it ranks the answering note first for this share of its questions

# Pairs of the scripts written without spaces, as natives write them: a query in one of them gets the floor its own
# pairs measure (`script_floor`). all-MiniLM-L6-v2 ranks the answering note first for 29 of the 32 English
# questions, but for 3 of 8 Chinese, 3 of 8 Japanese, 2 of 8 Korean and 1 of 6 Thai ones, and puts an unrelated
# Chinese question as close to a note as 0.79 ("怎么做红烧肉" to a note on factor states): it does not read them,
# and a query in them is shown nothing on its meaning alone (on bench/precision.py, hybrid no-answer questions in
# Chinese got a sure hit 58% of the time, in Korean 67%). A model that reads them gets a floor it can reach.
SCRIPT_PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "han": (
        ("新版本什么时候发布？", "正式上线定在三月十四号，之前还有两周公测。"),
        ("报表缓存多久过期", "导出的PDF在缓存里保留六个小时，过期后重新生成。"),
        ("单元测试里可以模拟数据库吗", "测试要连真实的PostgreSQL容器，不许mock驱动。"),
        ("孩子几点放学", "周三下午一点下课，其他日子三点二十。"),
        ("年付套餐怎么退款", "年度订阅在续费后三十天内按比例退还，由财务审批。"),
        ("我的上级是谁", "我向平台部负责人汇报，从去年春天开始。"),
        ("猫该打疫苗了吗", "咪咪在河畔动物医院建档，五月份要打加强针。"),
        ("周末出门要带哪些东西", "行李清单：充电器、护照、雨衣、两套换洗衣服。"),
    ),
    "kana": (
        ("新しいアプリはいつ公開されますか", "正式リリースは3月14日、その前に2週間のベータ期間がある。"),
        ("子どものお迎えは何時？", "授業は15時20分に終わる。水曜日だけは13時。"),
        ("ゴミの日はいつだっけ", "資源ごみは火曜の夜に出す。燃えるごみは金曜日。"),
        ("上司は誰ですか", "プラットフォーム部の部長に去年の春から報告している。"),
        ("年額プランの返金方法", "年払いの契約は更新から30日以内なら日割りで返金、経理の承認が必要。"),
        ("猫の病院はどこ", "うちの猫は川沿いの動物病院に登録していて、予防接種は5月。"),
        ("旅行の持ち物リスト", "充電器、パスポート、雨具、着替え二日分を忘れずに。"),
        ("コミットメッセージの書き方", "件名はチケット番号から始めて命令形で、72文字以内にする。"),
    ),
    "hangul": (
        ("새 앱은 언제 출시돼?", "정식 공개는 3월 14일이고 그 전에 2주 동안 베타 테스트를 한다."),
        ("아이들 하교 시간이 언제야", "수업은 3시 20분에 끝나고 수요일만 1시에 끝난다."),
        ("분리수거는 무슨 요일에 해?", "재활용은 화요일 저녁에 내놓고 일반 쓰레기는 격주 금요일이다."),
        ("내 상사가 누구지", "작년 봄부터 플랫폼 본부장님께 보고하고 있다."),
        ("연간 요금제 환불은 어떻게 해", "연 구독은 갱신 후 30일 안이면 남은 기간만큼 돌려주고 재무팀이 승인한다."),
        ("고양이 병원 어디 다녀?", "나비는 강변 동물병원에 등록되어 있고 예방접종은 5월이다."),
        ("여행 갈 때 챙길 것", "충전기, 여권, 우비, 갈아입을 옷 두 벌을 꼭 챙긴다."),
        ("테스트에서 DB를 흉내 내도 돼?", "테스트는 컨테이너로 띄운 실제 PostgreSQL에 붙어서 돌린다. 드라이버 목은 금지."),
    ),
    "thai": (
        ("แอปใหม่จะเปิดตัวเมื่อไหร่", "เปิดให้ใช้จริงวันที่ 14 มีนาคม ก่อนหน้านั้นทดลองเบต้าสองสัปดาห์"),
        ("ลูกเลิกเรียนกี่โมง", "โรงเรียนเลิกบ่ายสามโมงยี่สิบ ยกเว้นวันพุธเลิกบ่ายโมง"),
        ("ขยะเก็บวันไหน", "ขยะรีไซเคิลวางไว้หน้าบ้านคืนวันอังคาร ขยะทั่วไปทุกวันศุกร์เว้นศุกร์"),
        ("หัวหน้าของฉันคือใคร", "ฉันรายงานตรงกับผู้อำนวยการฝ่ายแพลตฟอร์มตั้งแต่ต้นปีที่แล้ว"),
        ("พาแมวไปหาหมอที่ไหน", "เจ้าส้มฝากประวัติไว้ที่โรงพยาบาลสัตว์ริมน้ำ ฉีดวัคซีนเดือนพฤษภาคม"),
        ("ไปเที่ยวต้องเตรียมอะไรบ้าง", "ของที่ต้องเอาไป สายชาร์จ พาสปอร์ต เสื้อกันฝน เสื้อผ้าสองชุด"),
    ),
}


def script(text: str) -> str:
    """The script most of a text's letters are in: `han` (Chinese), `kana` (Japanese: kana beside its kanji),
    `hangul`, `thai`, or `latin` for every other (the scripts the floor of `PAIRS` is measured on)."""
    counts = {"han": 0, "kana": 0, "hangul": 0, "thai": 0, "latin": 0}
    for c in text:
        if not c.isalpha():
            continue
        if "\u3040" <= c <= "\u30ff" or "\uff66" <= c <= "\uff9f":
            counts["kana"] += 1
        elif "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf" or "\uf900" <= c <= "\ufaff" or c >= "\U00020000":
            counts["han"] += 1
        elif "\uac00" <= c <= "\ud7af" or "\u1100" <= c <= "\u11ff" or "\u3130" <= c <= "\u318f":
            counts["hangul"] += 1
        elif "\u0e00" <= c <= "\u0e7f":
            counts["thai"] += 1
        else:
            counts["latin"] += 1
    if counts["kana"]:  # Japanese writes its words in kanji and its grammar in kana
        counts["kana"], counts["han"] = counts["kana"] + counts["han"], 0
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] > counts["latin"] else "latin"


def script_floor(embed: Callable[[Sequence[str]], Any], name: str) -> float:
    """The similarity floor of the model behind `embed` for queries in script `name`, measured on its pairs as
    `floor` measures it: the closest tenth of the answering pairs, and never below the closest unrelated pair
    (its questions against the other notes of its script and those of `PAIRS`); `UNREAD` when the model ranks
    the answering note first for fewer than `READS` of the questions."""
    own = SCRIPT_PAIRS[name]
    questions = [q for q, _ in own]
    notes = [n for _, n in own] + [n for _, n in PAIRS]
    np = numpy_module()
    rows = np.asarray(embed(questions + notes), dtype=np.float32)
    sims = np.einsum("ik,jk->ij", rows[: len(own)], rows[len(own) :]).tolist()
    if sum(1 for i, row in enumerate(sims) if max(range(len(notes)), key=row.__getitem__) == i) < READS * len(own):
        return UNREAD
    answering = sorted(sims[i][i] for i in range(len(own)))
    unrelated = max(sims[i][j] for i in range(len(own)) for j in range(len(notes)) if i != j)
    return round(float(max(answering[int(0.9 * (len(answering) - 1))], unrelated)), 4)


def floor(embed: Callable[[Sequence[str]], Any]) -> float:
    """The similarity floor of the model behind `embed` (texts -> unit rows), measured on PAIRS."""
    questions = [q for q, _ in PAIRS]
    notes = [n for _, n in PAIRS]
    np = numpy_module()
    rows = np.asarray(embed(questions + notes), dtype=np.float32)
    sims = np.einsum("ik,jk->ij", rows[: len(PAIRS)], rows[len(PAIRS) :]).tolist()
    answering = [sims[i][i] for i in range(len(PAIRS))]
    unrelated = sorted(sims[i][j] for i in range(len(PAIRS)) for j in range(len(PAIRS)) if i != j)
    strong = sorted(answering)[int(0.9 * (len(answering) - 1))]
    return round(float(max(strong, unrelated[-1])), 4)
