package memorytest

import "github.com/agentrt/agentrt/memory"

// The kinds of [FactQuestion].
const (
	// Shared: the question shares content words with its fact ("Which port
	// does the staging database use?" for "The staging database runs
	// PostgreSQL 15 on port 5433.").
	Shared = "shared"
	// Paraphrase: the question asks for the fact in other words ("What
	// breed is my pet?" for "The user's dog is a beagle named Biscuit.").
	Paraphrase = "paraphrase"
	// Chinese: the question and the fact are in Chinese.
	Chinese = "chinese"
	// JapaneseKorean: the question and the fact are in Japanese or Korean.
	JapaneseKorean = "japanese-korean"
)

// FactQuestion is a question about one of the [Facts], as a user would
// ask it, with the ID of the fact that answers it.
type FactQuestion struct {
	Text   string
	Answer string // the ID of a fact in Facts
	Kind   string // Shared, Paraphrase, Chinese or JapaneseKorean
}

// Facts are what an assistant might remember about a user and their team:
// 36 in English, 14 in Chinese, 4 in Japanese and Korean. [FactQuestions]
// ask about them.
var Facts = []memory.Item{
	{ID: "dog", Text: "The user's dog is a beagle named Biscuit."},
	{ID: "allergy", Text: "The user is allergic to peanuts and carries an EpiPen."},
	{ID: "units", Text: "The user prefers metric units and temperatures in Celsius."},
	{ID: "coffee", Text: "The user drinks oat milk flat whites, never with sugar."},
	{ID: "deploy-day", Text: "Production deployments happen on Tuesdays after the standup."},
	{ID: "staging-db", Text: "The staging database runs PostgreSQL 15 on port 5433."},
	{ID: "oncall", Text: "Priya is on call for the payments service this week."},
	{ID: "laptop", Text: "The user's work laptop is a 14-inch MacBook Pro with 32 GB of RAM."},
	{ID: "home", Text: "The user lives in Lisbon and works in the Europe/Lisbon time zone."},
	{ID: "seat", Text: "The user always books aisle seats on long-haul flights."},
	{ID: "japanese", Text: "The user is learning Japanese and practises with Duolingo every evening."},
	{ID: "daughter", Text: "The user's daughter Mia was born on 14 March 2019."},
	{ID: "car", Text: "The user drives a blue 2018 Toyota Corolla hybrid."},
	{ID: "climbing", Text: "The user goes climbing at the bouldering gym on Mondays and Thursdays."},
	{ID: "editor", Text: "The user writes code in Neovim with the Catppuccin colour scheme."},
	{ID: "replicas", Text: "The team runs its agents on Kubernetes with three replicas per region."},
	{ID: "backups", Text: "Backups are written nightly to the S3 bucket acme-backups-eu in Frankfurt."},
	{ID: "ci", Text: "Continuous integration runs on GitHub Actions and must finish in under ten minutes."},
	{ID: "budget", Text: "The monthly cloud budget of the team is 4,000 euros."},
	{ID: "manager", Text: "The user's manager is Daniel Okafor, who wants status updates by email."},
	{ID: "vacation", Text: "The user is on vacation from 22 December to 5 January."},
	{ID: "diet", Text: "The user is vegetarian but eats fish occasionally."},
	{ID: "novel", Text: "The user's favourite novel is The Left Hand of Darkness by Ursula K. Le Guin."},
	{ID: "wifi", Text: "The office wifi password rotates on the first Monday of every month."},
	{ID: "standup", Text: "The daily standup starts at 9:30 in the Lighthouse meeting room."},
	{ID: "api-keys", Text: "API keys are kept in HashiCorp Vault under the path kv/agents."},
	{ID: "display", Text: "The user reads more easily with large fonts and dark mode."},
	{ID: "plant", Text: "The user keeps a fiddle-leaf fig that needs watering every ten days."},
	{ID: "commute", Text: "The user commutes by electric bicycle, about twelve kilometres each way."},
	{ID: "music", Text: "The user listens to lo-fi hip hop while programming."},
	{ID: "reviews", Text: "Pull requests need two approvals before they can be merged."},
	{ID: "logs", Text: "Application logs are kept for 30 days in Loki, then deleted."},
	{ID: "model", Text: "The default model of the team is gpt-4.1-mini; summaries use a cheaper one."},
	{ID: "phone", Text: "The user's phone number ends in 4471, and they prefer text messages to calls."},
	{ID: "parking", Text: "The user's parking space at the office is B17 on level -2."},
	{ID: "sister", Text: "The user's sister Ana lives in Toronto and works as a nurse."},

	{ID: "zh-fruit", Text: "用户最喜欢的水果是芒果。"},
	{ID: "zh-home", Text: "用户住在上海浦东，离地铁站步行十分钟。"},
	{ID: "zh-meeting", Text: "团队每周三下午两点开例会。"},
	{ID: "zh-allergy", Text: "用户对海鲜过敏，尤其是虾。"},
	{ID: "zh-cat", Text: "用户养了一只叫小白的猫，今年三岁。"},
	{ID: "zh-hobby", Text: "用户周末喜欢去爬山和拍照。"},
	{ID: "zh-car", Text: "用户开的是一辆白色的特斯拉Model 3。"},
	{ID: "zh-tea", Text: "用户每天早上喝一杯绿茶，不喝咖啡。"},
	{ID: "zh-birthday", Text: "用户的生日是十月八日。"},
	{ID: "zh-son", Text: "用户的儿子在北京读大学，学的是计算机。"},
	{ID: "zh-release", Text: "生产环境的发布只在周二晚上进行。"},
	{ID: "zh-password", Text: "测试数据库的密码每三十天更换一次。"},
	{ID: "zh-spanish", Text: "用户正在学习西班牙语，打算明年去马德里旅行。"},
	{ID: "zh-job", Text: "用户在一家医院做护士，经常上夜班。"},

	{ID: "ja-home", Text: "ユーザーは大阪に住んでいて、毎朝自転車で通勤しています。"},
	{ID: "ja-food", Text: "ユーザーの好きな食べ物はラーメンです。"},
	{ID: "ko-fruit", Text: "사용자가 가장 좋아하는 과일은 딸기입니다."},
	{ID: "ko-job", Text: "사용자는 서울에서 소프트웨어 엔지니어로 일합니다."},
}

// FactQuestions are 50 questions about the [Facts]: 16 that share words
// with their fact, 16 paraphrases, 13 in Chinese and 5 in Japanese and
// Korean.
var FactQuestions = []FactQuestion{
	{"What is the name of the user's dog?", "dog", Shared},
	{"Which port does the staging database use?", "staging-db", Shared},
	{"What is the user allergic to?", "allergy", Shared},
	{"On which day do production deployments happen?", "deploy-day", Shared},
	{"Who is on call for payments this week?", "oncall", Shared},
	{"How much RAM does the work laptop have?", "laptop", Shared},
	{"Which seats does the user book on flights?", "seat", Shared},
	{"Where are the nightly backups written?", "backups", Shared},
	{"How many replicas of the agents run on Kubernetes?", "replicas", Shared},
	{"How many approvals does a pull request need?", "reviews", Shared},
	{"How long are application logs kept?", "logs", Shared},
	{"What is the monthly cloud budget?", "budget", Shared},
	{"When does the daily standup start?", "standup", Shared},
	{"Where are API keys kept?", "api-keys", Shared},
	{"What is the user's favourite novel?", "novel", Shared},
	{"When does the office wifi password rotate?", "wifi", Shared},

	{"What breed is my pet?", "dog", Paraphrase},
	{"Can I offer them a snack with nuts?", "allergy", Paraphrase},
	{"Should I give the weather in Fahrenheit?", "units", Paraphrase},
	{"How do they take their coffee?", "coffee", Paraphrase},
	{"What kind of computer do I have for my job?", "laptop", Paraphrase},
	{"Which city is the user based in?", "home", Paraphrase},
	{"Which foreign language are they studying?", "japanese", Paraphrase},
	{"How old is the user's kid?", "daughter", Paraphrase},
	{"What vehicle does the user own?", "car", Paraphrase},
	{"What sport does the user do after work?", "climbing", Paraphrase},
	{"Which text editor does the user prefer?", "editor", Paraphrase},
	{"Does the user eat meat?", "diet", Paraphrase},
	{"When is the user out of office at the end of the year?", "vacation", Paraphrase},
	{"How does the user get to the office?", "commute", Paraphrase},
	{"Who does the user report to?", "manager", Paraphrase},
	{"Where do we store credentials for the model providers?", "api-keys", Paraphrase},

	{"芒果", "zh-fruit", Chinese},
	{"用户最喜欢什么水果？", "zh-fruit", Chinese},
	{"用户住在哪里？", "zh-home", Chinese},
	{"团队什么时候开例会？", "zh-meeting", Chinese},
	{"用户对什么过敏？", "zh-allergy", Chinese},
	{"用户的猫叫什么？", "zh-cat", Chinese},
	{"用户开什么车？", "zh-car", Chinese},
	{"用户早上喝什么？", "zh-tea", Chinese},
	{"用户的生日是哪天？", "zh-birthday", Chinese},
	{"生产环境什么时候发布？", "zh-release", Chinese},
	{"数据库密码多久换一次？", "zh-password", Chinese},
	{"用户的宠物是什么？", "zh-cat", Chinese},
	{"用户有什么运动爱好？", "zh-hobby", Chinese},

	{"ラーメン", "ja-food", JapaneseKorean},
	{"ユーザーはどこに住んでいますか", "ja-home", JapaneseKorean},
	{"ユーザーの好きな食べ物は何ですか", "ja-food", JapaneseKorean},
	{"딸기", "ko-fruit", JapaneseKorean},
	{"사용자는 어디에서 일합니까?", "ko-job", JapaneseKorean},
}
