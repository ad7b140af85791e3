"""The similarity bars of an embedding model, measured on pairs written for it.

A cosine means something only for the model that produced it: one model's
0.3 is another's 0.6. So the bars a semantic-only hit must reach are measured
for the model in use, when its vector index is created, and stored beside
the vectors (`VectorIndex.bars`): a change of model drops both and measures
again. The measurement embeds `PAIRS`, questions each answered by one short
note in other words (written for memdir, across the kinds of memory it
keeps), and `NEAR`, notes that miss them: another fact on the question's
subject ("the app's icon is blue" for "when does the app go live?"), the same
kind of fact on another subject, and a sibling, the same kind of fact on its
subject of another thing ("Stripe retries a failed card payment four times"
for how long Stripe retries a webhook). Two bars come out (`Bars`):

- `floor`, what a conversation's turn needs: as close to its query as the
  closest tenth of the true answers (their 90th percentile), and never below
  the closest unrelated pair (each question against the other answers);
- `topic`, what a topic file needs to be sure on its meaning alone: the floor,
  and never below the closest near miss. A memory's questions that nothing
  answers are mostly near misses (it holds the subject, not the asked fact),
  and a model sees a sibling closer than the answer: the siblings' median is
  0.58 for all-MiniLM-L6-v2 (the answers' 0.44), 0.39 for the Universal
  Sentence Encoder (0.24). So a topic file is sure on meaning alone only where
  no near miss comes: mostly its words make it sure, and the meaning ranks it.

all-MiniLM-L6-v2: floor 0.55 (90th percentile 0.56, closest unrelated 0.50),
topic 0.77. It had 1.1 times the floor (0.60), chosen for it on
`bench/precision.py`, which held no-answer questions as the words alone do but
not for USE multilingual v3 (floor 0.36, topic 0.59): at 1.1 times its floor
(0.39), 5 more of the 149 no-answer questions got a sure hit than by their
words (88.6% without one, 91.9% now, as MiniLM); at the closest near miss of
the first two kinds alone (0.44), 3 more (89.9%). What it costs: a topic file
worded unlike the question is not sure on its meaning alone (the context's
query layer adds the answering file for 67.9% of the answerable questions,
69.7% before, with USE; 67.6%, 69.5% before, with MiniLM); ranking is unchanged.

A floor relative to the query's background in its memory (the best cosine less
the median over every file) was measured against this absolute one on the two
conversation corpora, each asked its own questions and others' with the speakers
renamed. It told them apart less well: with 85% of LoCoMo's own questions above
it, 60% of the others' were too, against 42%; on REALTALK 77% of its own and 61% of the others' against
84% and 57%.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .embed import numpy_module

VERSION = "4"  # bump when the pairs, the near misses or the rule change, so that stored bars are measured again

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


# Three near misses of each question of PAIRS, in its order: another fact on its subject; the same kind of fact on
# another subject; and the same kind of fact on its subject, of another thing (a sibling: "Stripe retries a failed
# card payment four times" for how long Stripe retries a webhook). None answers its question, and the sibling shares
# its words where the answer was written in others: all-MiniLM-L6-v2 puts the sibling closer than the answer for 29
# of the 32 questions (the first kind for 12), USE multilingual v3 for 31 (16).
NEAR: tuple[tuple[str, str, str], ...] = (
    ("The app's onboarding screens were redesigned in the new brand colours last week.",
     "The office move to the new building happens on 2 June.",
     "The new app's beta opens to staff on 28 February."),
    ("Reports can be exported as PDF or CSV from the analytics page.",
     "Session cookies expire after two weeks without a visit.",
     "Generated reports are kept in the team's shared folder, sorted by month."),
    ("The dashboard shows revenue, churn and active users on its first tab.",
     "Don't propose a new font for the marketing site; the brand team owns it.",
     "The dashboard's colour scheme follows the brand guide: navy headers, white cards."),
    ("We squash commits when a pull request is merged into main.",
     "Release notes are written in plain English for customers, one line per change.",
     "Commit messages of the release branch are collected into the changelog by a script."),
    ("Unit tests run on every push and take about four minutes in CI.",
     "Stubbing the email service in tests is fine: a fake SMTP server records what was sent.",
     "Unit tests fake the clock with freezegun so that dates are stable."),
    ("Sam fixed the flaky alert on the payments queue during his last on-call week.",
     "Alex takes over the budget spreadsheet from Jo next quarter.",
     "Sam carries the pager this week and hands it over on Monday."),
    ("The router sits in the hallway cupboard; restart it if the wifi drops.",
     "The alarm code for the front door is in the family password manager.",
     "The password for the office network is changed every quarter by IT."),
    ("Mia's favourite breakfast is porridge with banana.",
     "Grandpa can't have grapefruit with his blood pressure tablets.",
     "Our son can't eat eggs; he gets hives."),
    ("The green bin is for garden waste; the council charges for it yearly.",
     "The window cleaner comes every fourth Thursday.",
     "The bins are kept behind the side gate, away from the foxes."),
    ("The school asks the kids to bring a packed lunch on trip days.",
     "Swimming lessons finish at half past five; parking is behind the leisure centre.",
     "The kids walk to school with the neighbours at 8:15."),
    ("The annual plan costs 120 euros and includes priority support.",
     "Hardware returns are accepted within 14 days if the box is unopened.",
     "Monthly plans are not refunded; they run to the end of the month."),
    ("Reminders are sent by SMS 24 hours before each appointment.",
     "Push notifications stopped on older Android phones after the last app update.",
     "Text reminders to UK numbers arrive within a minute."),
    ("Every incident gets a short written review within a week.",
     "A feature request counts as high priority when three paying customers ask for it.",
     "Urgent incidents are announced in the incidents channel by the on-call engineer."),
    ("My sourdough loaf bakes for 40 minutes at 230 degrees in a Dutch oven.",
     "Water the basil every morning and keep it out of the afternoon sun.",
     "My sourdough starter is called Bubbles and lives on the top shelf of the fridge."),
    ("I track my sleep with a ring; last month I averaged six hours forty.",
     "A short walk after lunch helps me focus in the afternoon.",
     "I sleep better at my parents' house than at home."),
    ("Sunday's long run is 14 km along the canal, at an easy pace.",
     "Warm-up before climbing: shoulder rolls, wrist circles and easy traverses.",
     "Stretches before a swim: arm circles and a few shoulder rolls."),
    ("Customers see the changelog on the status page after each release.",
     "Design mock-ups are reviewed in Figma before they reach engineering.",
     "Changes reach customers in a weekly release every Tuesday."),
    ("The delivery estimate is shown at checkout and in the tracking email.",
     "The churn forecast was within two percent of the real figure last quarter.",
     "The delivery estimate model uses traffic, weather and the restaurant's preparation time."),
    ("Stripe webhooks are signed; verify the signature with the endpoint secret.",
     "Our job queue retries a failed email three times, ten minutes apart.",
     "Stripe retries a failed card payment up to four times over two weeks."),
    ("I joined the platform engineering team two years ago as a backend developer.",
     "My sister's boss at the bakery is called Elena.",
     "My boss's boss is the CTO, Marcus Lee."),
    ("Whiskers eats wet food twice a day and hates the carrier.",
     "Our dentist is Dr Osei at the Bridge Street practice.",
     "The dog goes to the vet on Elm Street."),
    ("The Golf is insured with Admiral, paid monthly.",
     "The boiler needs its yearly check before winter.",
     "The car's last service was in March at the Volkswagen garage."),
    ("Last year's offsite was in Lisbon and people liked the workshops.",
     "We agreed to move the product launch party to the rooftop bar.",
     "We still have to decide the budget for the team offsite."),
    ("The export worker writes CSV files to the shared bucket every hour.",
     "To restart the mail server, stop postfix, clear the spool and start it again.",
     "The export worker restarts itself every night at two."),
    ("Lakeside Physio has three clinics and books about 400 appointments a week.",
     "Our accountant wants receipts sent as one zip file at the end of the month.",
     "The customer's preferred language is German."),
    ("The database runs PostgreSQL 15 on a managed instance with daily backups.",
     "The web servers run eight worker processes with four threads each.",
     "The database connection pool is configured in pgbouncer.ini on each host."),
    ("For the weekend trip we booked a cabin by the lake, two hours' drive away.",
     "Shopping list for the barbecue: charcoal, sausages, buns and lemonade.",
     "For a work trip I pack the laptop, its charger and one suit."),
    ("My guitar is a second-hand Yamaha; new strings every two months.",
     "This month's running plan: three easy runs and one interval session a week.",
     "Last month on guitar I practised scales and the intro of Wonderwall."),
    ("Billing questions go to the finance mailbox, not to support.",
     "The plan for the office network: new switches in May, cabling in June.",
     "The billing switch was approved by the board in January."),
    ("Two-step login is required for every admin account since January.",
     "To reset the smart plug, hold its button for ten seconds until it blinks.",
     "Reset a forgotten password with the link on the login page."),
    ("Customers answer about a third of our support emails within a day.",
     "Internal docs are written in the second person, in short sentences.",
     "Replies to customers must go out within four working hours."),
    ("We spend about 110 pounds a week on groceries.",
     "We order printer paper and toner from OfficeHub every month.",
     "The supermarket delivery slot is Thursday morning."),
)


UNREAD = 2.0  # the floor of a script the model does not read: no cosine reaches it
READS = 0.75  # a model reads a script when it ranks the answering note first for this share of its questions

# Pairs of the scripts written without spaces, as natives write them: a query in one of them gets the bars its own
# pairs measure (`measure`). all-MiniLM-L6-v2 ranks the answering note first for 29 of the 32 English
# questions, but for 3 of 8 Chinese, 3 of 8 Japanese, 2 of 8 Korean and 1 of 6 Thai ones, and puts an unrelated
# Chinese question as close to a note as 0.79 ("怎么做红烧肉" to a note on factor states): it does not read them,
# and a query in them is shown nothing on its meaning alone (on bench/precision.py, hybrid no-answer questions in
# Chinese got a sure hit 58% of the time, in Korean 67%). A model that reads them gets bars it can reach: USE
# multilingual v3 ranks the answering note first for 7 of 8 Chinese, 7 of 8 Japanese and 5 of 6 Thai questions once
# the English note each translates (`TWINS`) is left out (with it, 2 to 4: the twin came first), 5 of 8 Korean ones.
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


# The question of PAIRS each pair of a script translates: its note answers the pair's question too, in English, so it
# is neither an unrelated note nor a near miss of it (a model that reads both languages puts it closest).
TWINS: dict[str, tuple[int, ...]] = {"han": (0, 1, 4, 9, 10, 19, 20, 26), "kana": (0, 9, 8, 19, 10, 20, 26, 3), "hangul": (0, 9, 8, 19, 10, 20, 26, 4), "thai": (0, 9, 8, 19, 20, 26)}

# Two near misses of each pair of a script, in its order: another fact on the question's subject, and a sibling.
SCRIPT_NEAR: dict[str, tuple[tuple[str, str], ...]] = {
    "han": (
        ("新版本的图标换成了蓝色，设计稿在群里。", "新版本的内测下周一先给员工用。"),
        ("报表可以导出成PDF或者Excel，在分析页面右上角。", "报表缓存放在Redis里，按用户分开。"),
        ("单元测试每次推送都会跑，大概四分钟。", "单元测试里用freezegun固定时间。"),
        ("学校要求孩子周五穿运动服。", "孩子每天早上七点四十出门上学。"),
        ("年付套餐一年一千二，包含优先客服。", "月付套餐不退款，用到月底为止。"),
        ("我前年加入平台部，做后端开发。", "我上级的上级是技术副总裁。"),
        ("咪咪每天吃两顿湿粮，不喜欢进猫包。", "狗狗的疫苗去年十月已经打过了。"),
        ("周末订了湖边的小木屋，开车两个小时。", "出差要带笔记本电脑、充电器和一套西装。"),
    ),
    "kana": (
        ("新しいアプリのアイコンは青に変えた。デザインはFigmaにある。", "新しいアプリのベータ版は来週から社員に配る。"),
        ("遠足の日は子どもにお弁当を持たせること。", "子どもは毎朝7時40分に家を出る。"),
        ("ゴミ袋は台所の一番下の引き出しにある。", "ゴミは裏口の横に置いておく。カラス対策でネットをかける。"),
        ("2年前にプラットフォーム部にバックエンドエンジニアとして入った。", "上司の上司はCTOの佐藤さん。"),
        ("年額プランは1万2千円で、優先サポートが付く。", "月額プランは返金なし、月末まで使える。"),
        ("うちの猫はウェットフードを1日2回食べる。キャリーが嫌い。", "犬は駅前の動物病院に通っている。"),
        ("週末の旅行は湖のそばのコテージを予約した。車で2時間。", "出張にはノートパソコンと充電器とスーツを持っていく。"),
        ("プルリクエストはmainにマージするときにスカッシュする。", "リリースブランチのコミットメッセージはスクリプトで変更履歴にまとめる。"),
    ),
    "hangul": (
        ("새 앱 아이콘은 파란색으로 바꿨고 디자인은 피그마에 있다.", "새 앱 베타는 다음 주부터 직원들에게 먼저 배포한다."),
        ("소풍 가는 날에는 아이들 도시락을 싸 보내야 한다.", "아이들은 매일 아침 7시 40분에 집을 나선다."),
        ("쓰레기봉투는 부엌 맨 아래 서랍에 있다.", "분리수거함은 현관 옆 창고에 있다."),
        ("재작년에 플랫폼 본부에 백엔드 개발자로 들어왔다.", "내 상사의 상사는 CTO인 김 이사님이다."),
        ("연간 요금제는 12만 원이고 우선 지원이 포함된다.", "월간 요금제는 환불이 안 되고 월말까지 쓸 수 있다."),
        ("나비는 하루에 두 번 습식 사료를 먹고 이동장을 싫어한다.", "강아지는 역 앞 동물병원에 다닌다."),
        ("주말 여행은 호숫가 오두막으로 예약했고 차로 두 시간 걸린다.", "출장 갈 때는 노트북, 충전기, 정장 한 벌을 챙긴다."),
        ("테스트는 푸시할 때마다 돌고 4분쯤 걸린다.", "테스트에서는 freezegun으로 시간을 고정한다."),
    ),
    "thai": (
        ("ไอคอนของแอปใหม่เปลี่ยนเป็นสีฟ้าแล้ว แบบอยู่ในฟิกม่า", "แอปใหม่เวอร์ชันเบต้าจะให้พนักงานลองใช้ก่อนสัปดาห์หน้า"),
        ("วันไปทัศนศึกษาต้องเตรียมข้าวกล่องให้ลูก", "ลูกออกจากบ้านไปโรงเรียนทุกเช้าเจ็ดโมงสี่สิบ"),
        ("ถุงขยะอยู่ในลิ้นชักล่างสุดในครัว", "ถังขยะวางไว้ข้างประตูหลังบ้าน"),
        ("ฉันเข้าฝ่ายแพลตฟอร์มเมื่อสองปีก่อนในตำแหน่งนักพัฒนาแบ็กเอนด์", "หัวหน้าของหัวหน้าฉันคือซีทีโอ"),
        ("เจ้าส้มกินอาหารเปียกวันละสองมื้อ และไม่ชอบกระเป๋าใส่แมว", "หมาไปหาหมอที่คลินิกหน้าสถานีรถไฟ"),
        ("เที่ยวสุดสัปดาห์นี้จองบ้านพักริมทะเลสาบไว้ ขับรถสองชั่วโมง", "ไปทำงานต่างจังหวัดต้องเอาโน้ตบุ๊ก ที่ชาร์จ และสูทหนึ่งชุด"),
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


class Bars(NamedTuple):
    """The cosines a hit with no words of the query to support it must reach to be sure, for one model and script."""

    floor: float  # a conversation's turn
    topic: float  # a topic file: the floor, and above the closest near miss


def measure(embed: Callable[[Sequence[str]], Any], name: str = "latin") -> Bars:
    """The bars of the model behind `embed` (texts -> unit rows) for queries in script `name`.

    Latin letters are measured on `PAIRS` and `NEAR`; another script on its own pairs, with the notes of `PAIRS`
    (less each pair's twin) as unrelated ones and its own near misses beside those of `NEAR`. `floor`: the closest
    tenth of the answering pairs, never below the closest unrelated pair; `topic`: never below the closest near miss.
    A script whose answering note the model ranks first for fewer than `READS` of its questions gets `UNREAD` for
    both: the model does not read it.
    """
    english = [n for _, n in PAIRS]
    nears = [n for pair in NEAR for n in pair]
    if name == "latin":
        questions, twins = [q for q, _ in PAIRS], [-1] * len(PAIRS)
        notes = english
    else:
        own = SCRIPT_PAIRS[name]
        questions, twins = [q for q, _ in own], list(TWINS[name])
        notes = [n for _, n in own] + english
        nears = [*(n for pair in SCRIPT_NEAR[name] for n in pair), *nears]
    np = numpy_module()
    rows = np.asarray(embed(questions + notes + nears), dtype=np.float32)
    asked, answers, missed = rows[: len(questions)], rows[len(questions) : -len(nears)], rows[-len(nears) :]
    sims = np.einsum("ik,jk->ij", asked, answers)
    for i, twin in enumerate(twins):
        if twin >= 0:
            sims[i, len(questions) + twin] = -1.0  # the English twin answers it too: not a note to tell apart
    answering = sorted(float(sims[i, i]) for i in range(len(questions)))
    best = int(np.sum(np.argmax(sims, axis=1) == np.arange(len(questions))))
    if name != "latin" and best < READS * len(questions):
        return Bars(UNREAD, UNREAD)
    np.fill_diagonal(sims[:, : len(questions)], -1.0)
    floor = max(answering[int(0.9 * (len(answering) - 1))], float(sims.max()))
    near = float(np.einsum("ik,jk->ij", asked, missed).max())
    return Bars(round(floor, 4), round(max(floor, near), 4))


def floor(embed: Callable[[Sequence[str]], Any]) -> float:
    """The floor of the model behind `embed` for Latin letters (`measure`)."""
    return measure(embed).floor
