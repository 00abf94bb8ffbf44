"""The labelled evaluation set of search by meaning (``python -m bench.semantic``): agents and
entities described as their makers would, and queries as a person asking for a task would
write them, each with the keys of the agents that answer it. Most queries share no word
with their answers ("paraphrase"); the "keyword" ones name their answer's own words, to
check that fusing the orders costs keyword search nothing where it already does well. The
population is completed by the benchmark's generated cards (bench/generate.py)."""

# key: (name, description, [(skill name, skill description, tags)])
AGENTS = {
    "restaurant": (
        "TableFinder",
        "Restaurant reservations at thousands of venues.",
        [
            (
                "Reserve",
                "Reserve seating at a restaurant for a party at a given time.",
                ["dining", "reservations"],
            )
        ],
    ),
    "transcribe": (
        "Scribe Audio",
        "Audio transcription for meetings, podcasts and calls.",
        [
            (
                "Transcribe",
                "Converts recorded audio into a written transcript with speaker labels.",
                ["audio", "transcription"],
            )
        ],
    ),
    "flights": (
        "SkyFare",
        "Airline ticket search and booking across carriers.",
        [
            (
                "Search fares",
                "Finds the cheapest airline tickets between airports on given dates.",
                ["travel", "airline"],
            )
        ],
    ),
    "hotel": (
        "StayScout",
        "Hotel room availability and lodging bookings.",
        [("Book room", "Books a hotel room for given nights and guests.", ["travel", "lodging"])],
    ),
    "weather": (
        "Nimbus",
        "Meteorological forecasts and severe storm alerts.",
        [
            (
                "Forecast",
                "Hourly and ten-day meteorological forecasts for any place.",
                ["meteorology"],
            )
        ],
    ),
    "translate": (
        "Polyglot",
        "Translation between 90 languages for documents and chat.",
        [
            (
                "Translate",
                "Renders text from one language into another.",
                ["translation", "languages"],
            )
        ],
    ),
    "invoice": (
        "LedgerBot",
        "Accounts payable automation: invoices captured, matched and paid.",
        [
            (
                "Capture invoice",
                "Extracts vendor, amounts and due dates from supplier invoices.",
                ["finance", "payables"],
            )
        ],
    ),
    "pdf_tables": (
        "TabulaX",
        "PDF table extraction into spreadsheets.",
        [("Extract tables", "Pulls tabular data out of PDF files into CSV.", ["pdf", "tables"])],
    ),
    "resume": (
        "TalentSift",
        "Candidate screening: parses CVs and ranks applicants for a role.",
        [
            (
                "Screen applicants",
                "Scores candidate CVs against a job description.",
                ["recruiting", "hr"],
            )
        ],
    ),
    "code_review": (
        "PullPal",
        "Automated review of pull requests: bugs, style and security issues.",
        [("Review diff", "Comments on a code diff with defects and fixes.", ["software", "git"])],
    ),
    "tax": (
        "TaxPilot",
        "Income tax return preparation for individuals.",
        [
            (
                "Prepare return",
                "Fills a personal income tax return from wage statements.",
                ["tax", "finance"],
            )
        ],
    ),
    "legal": (
        "ClauseGuard",
        "Contract analysis: risky clauses, obligations and renewal dates.",
        [
            (
                "Analyze contract",
                "Flags liability, termination and indemnity clauses.",
                ["legal", "contracts"],
            )
        ],
    ),
    "symptom": (
        "TriageMD",
        "Medical symptom triage and guidance on where to seek care.",
        [
            (
                "Triage",
                "Asks about symptoms and recommends urgent care, a physician or self-care.",
                ["health", "medical"],
            )
        ],
    ),
    "fitness": (
        "CoachFit",
        "Personal workout plans and exercise coaching.",
        [("Plan workouts", "Builds weekly strength and cardio routines.", ["fitness", "exercise"])],
    ),
    "recipe": (
        "Sous",
        "Recipe suggestions from the ingredients in your pantry.",
        [
            (
                "Suggest recipe",
                "Proposes dishes from listed ingredients and diets.",
                ["cooking", "food"],
            )
        ],
    ),
    "grocery": (
        "CartRunner",
        "Grocery ordering and same-day delivery from local supermarkets.",
        [
            (
                "Order groceries",
                "Places a supermarket order for home delivery.",
                ["groceries", "delivery"],
            )
        ],
    ),
    "ride": (
        "HailNow",
        "Taxi and rideshare dispatch to any address.",
        [
            (
                "Request ride",
                "Sends a car to the pickup point and tracks arrival.",
                ["transport", "taxi"],
            )
        ],
    ),
    "parcel": (
        "ShipTrack",
        "Shipment tracking across couriers with delivery estimates.",
        [
            (
                "Track shipment",
                "Status and location of a package by tracking number.",
                ["logistics", "courier"],
            )
        ],
    ),
    "currency": (
        "FXRate",
        "Foreign exchange rates and currency conversion.",
        [
            (
                "Convert currency",
                "Converts an amount between currencies at live rates.",
                ["finance", "forex"],
            )
        ],
    ),
    "stocks": (
        "TickerWatch",
        "Equity market quotes, portfolio alerts and price history.",
        [
            (
                "Quote",
                "Latest share price and daily change of a listed company.",
                ["markets", "equities"],
            )
        ],
    ),
    "crypto": (
        "ChainLens",
        "Blockchain wallet balances and token transfers.",
        [("Wallet balance", "Token holdings of a wallet address.", ["blockchain", "tokens"])],
    ),
    "email_draft": (
        "MailMuse",
        "Writes and polishes email replies in your tone.",
        [("Draft reply", "Composes a reply to a received email.", ["email", "writing"])],
    ),
    "calendar": (
        "Slotter",
        "Meeting scheduling that finds a time that suits every attendee.",
        [
            (
                "Find slot",
                "Proposes meeting times from attendees' calendars.",
                ["calendar", "meetings"],
            )
        ],
    ),
    "summarize": (
        "Gist",
        "Summaries of long reports and articles.",
        [("Summarize", "Condenses a document to its key points.", ["nlp", "summaries"])],
    ),
    "image_gen": (
        "PixelForge",
        "Image generation from text prompts.",
        [
            (
                "Generate image",
                "Creates an illustration or photo-like picture from a prompt.",
                ["images", "generative"],
            )
        ],
    ),
    "ocr": (
        "ReadScan",
        "Optical character recognition for scanned pages and photos.",
        [
            (
                "Recognize text",
                "Reads printed and handwritten characters from images.",
                ["ocr", "scanning"],
            )
        ],
    ),
    "sentiment": (
        "MoodMeter",
        "Sentiment analysis of reviews and social posts.",
        [("Score sentiment", "Rates text as positive, negative or neutral.", ["nlp", "analytics"])],
    ),
    "seo": (
        "RankRise",
        "Search engine optimization audits of websites.",
        [
            (
                "Audit site",
                "Finds crawl errors, missing metadata and slow pages.",
                ["seo", "marketing"],
            )
        ],
    ),
    "ads": (
        "AdTuner",
        "Pay-per-click campaign management and bid tuning.",
        [
            (
                "Tune bids",
                "Adjusts keyword bids to a target cost per acquisition.",
                ["advertising", "marketing"],
            )
        ],
    ),
    "support": (
        "HelpDeskAI",
        "Customer support ticket triage and answers from a knowledge base.",
        [("Answer ticket", "Drafts answers to customer tickets.", ["support", "helpdesk"])],
    ),
    "crm": (
        "PipeLine",
        "Sales pipeline management and lead scoring.",
        [("Score leads", "Ranks prospects by likelihood to buy.", ["sales", "crm"])],
    ),
    "payroll": (
        "PayDay",
        "Payroll runs, salary slips and withholding for small companies.",
        [("Run payroll", "Computes wages, deductions and pays staff.", ["hr", "payroll"])],
    ),
    "expense": (
        "Receipts",
        "Expense reports from receipts with policy checks.",
        [("File expense", "Turns receipt photos into expense claims.", ["finance", "expenses"])],
    ),
    "vuln": (
        "VulnHunter",
        "Vulnerability scanning of servers and containers.",
        [("Scan host", "Finds outdated packages and known CVEs on a host.", ["security", "cve"])],
    ),
    "phishing": (
        "PhishNet",
        "Detects phishing and fraudulent emails.",
        [("Check email", "Rates a message as phishing or legitimate.", ["security", "email"])],
    ),
    "uptime": (
        "PingWatch",
        "Website uptime monitoring with outage alerts.",
        [
            (
                "Monitor URL",
                "Checks a site every minute and alerts on downtime.",
                ["monitoring", "devops"],
            )
        ],
    ),
    "logs": (
        "LogSift",
        "Log aggregation and anomaly detection for services.",
        [
            (
                "Find anomalies",
                "Spots unusual error bursts in application logs.",
                ["observability", "devops"],
            )
        ],
    ),
    "sql": (
        "QueryCraft",
        "Natural language to SQL for your database.",
        [
            (
                "Write query",
                "Turns a question into a SQL statement and runs it.",
                ["database", "sql"],
            )
        ],
    ),
    "charts": (
        "Plotly Agent",
        "Data visualization: charts and dashboards from spreadsheets.",
        [
            (
                "Make chart",
                "Draws bar, line and pie charts from tabular data.",
                ["visualization", "dashboards"],
            )
        ],
    ),
    "tutor_math": (
        "MathMentor",
        "Step-by-step algebra and calculus tutoring.",
        [
            (
                "Explain problem",
                "Walks a student through solving an equation.",
                ["education", "mathematics"],
            )
        ],
    ),
    "language_learn": (
        "LinguaPal",
        "Conversation practice for learners of Spanish, French and German.",
        [
            (
                "Practice dialogue",
                "Role-plays everyday conversations and corrects mistakes.",
                ["education", "languages"],
            )
        ],
    ),
    "music": (
        "Tunesmith",
        "Playlist curation by mood and genre.",
        [
            (
                "Build playlist",
                "Assembles songs for a mood, activity or artist.",
                ["music", "streaming"],
            )
        ],
    ),
    "movie": (
        "ReelPick",
        "Film and series recommendations from your viewing history.",
        [
            (
                "Recommend",
                "Suggests films and shows you are likely to enjoy.",
                ["entertainment", "film"],
            )
        ],
    ),
    "news": (
        "Briefly",
        "Daily news digests by topic.",
        [("Digest", "Collects the day's headlines on chosen topics.", ["news", "media"])],
    ),
    "real_estate": (
        "HomeHunt",
        "Property listings for sale and rent with valuation estimates.",
        [
            (
                "Search listings",
                "Finds apartments and houses by area, price and rooms.",
                ["real estate", "property"],
            )
        ],
    ),
    "mortgage": (
        "LoanCalc",
        "Mortgage affordability and repayment schedules.",
        [
            (
                "Compute repayments",
                "Monthly payments and amortization of a home loan.",
                ["lending", "finance"],
            )
        ],
    ),
    "insurance": (
        "CoverQuote",
        "Car and home insurance quotes compared across insurers.",
        [("Quote policy", "Premiums for a vehicle or dwelling policy.", ["insurance"])],
    ),
    "car_repair": (
        "GarageLink",
        "Vehicle diagnostics and mechanic appointments.",
        [
            (
                "Diagnose fault",
                "Reads engine fault codes and books a workshop.",
                ["automotive", "maintenance"],
            )
        ],
    ),
    "pet": (
        "VetPal",
        "Pet health advice and veterinary appointment booking.",
        [
            (
                "Pet advice",
                "Guidance on dog and cat illnesses and nutrition.",
                ["pets", "veterinary"],
            )
        ],
    ),
    "plants": (
        "GreenThumb",
        "Plant identification and gardening care schedules.",
        [
            (
                "Identify plant",
                "Names a plant from a photo and gives watering advice.",
                ["gardening", "botany"],
            )
        ],
    ),
    "event_tickets": (
        "GateKeeper",
        "Concert and sports event ticketing.",
        [
            (
                "Buy tickets",
                "Purchases seats for concerts, matches and shows.",
                ["events", "tickets"],
            )
        ],
    ),
    "dating": (
        "Matchmaker",
        "Compatible partner suggestions for singles.",
        [("Suggest matches", "Proposes compatible profiles.", ["social", "relationships"])],
    ),
    "wedding": (
        "VowPlanner",
        "Wedding planning: venues, vendors and guest lists.",
        [("Plan wedding", "Coordinates ceremony logistics and budget.", ["events", "planning"])],
    ),
    "speech_synth": (
        "VoiceCraft",
        "Text to speech with natural voices.",
        [("Synthesize voice", "Reads text aloud as an audio file.", ["audio", "tts"])],
    ),
    "video_edit": (
        "CutRoom",
        "Automatic video editing and subtitles.",
        [("Edit video", "Trims footage, adds captions and music.", ["video", "editing"])],
    ),
    "logo": (
        "BrandMark",
        "Logo and brand identity design.",
        [("Design logo", "Creates logo concepts and color palettes.", ["design", "branding"])],
    ),
    "copywriting": (
        "CopyJet",
        "Marketing copy: product descriptions, slogans and landing pages.",
        [("Write copy", "Produces persuasive product text.", ["marketing", "writing"])],
    ),
    "plagiarism": (
        "OrigCheck",
        "Plagiarism detection for essays and papers.",
        [
            (
                "Check originality",
                "Compares a text against published sources.",
                ["education", "integrity"],
            )
        ],
    ),
    "citation": (
        "RefMaker",
        "Bibliography and citation formatting in APA, MLA and Chicago.",
        [("Format citation", "Formats references for a paper.", ["academic", "references"])],
    ),
    "energy": (
        "WattWise",
        "Household electricity usage analysis and savings tips.",
        [
            (
                "Analyze usage",
                "Breaks down a power bill by appliance and hour.",
                ["energy", "utilities"],
            )
        ],
    ),
    "solar": (
        "SunSizer",
        "Rooftop photovoltaic system sizing and payback estimates.",
        [("Size array", "Panels, inverter and yield for a roof.", ["solar", "renewables"])],
    ),
    "inventory_mgmt": (
        "StockKeeper",
        "Warehouse stock levels and reorder points.",
        [
            (
                "Reorder",
                "Computes reorder quantities from sales velocity.",
                ["warehouse", "supply chain"],
            )
        ],
    ),
    "route_plan": (
        "RouteWise",
        "Delivery route optimization for fleets of vans.",
        [("Optimize routes", "Orders stops to minimize driving time.", ["logistics", "fleet"])],
    ),
    "trip_plan": (
        "Wanderly",
        "Holiday itineraries with sights, transport and budget.",
        [("Plan itinerary", "Builds a day-by-day vacation plan.", ["travel", "tourism"])],
    ),
    "visa": (
        "VisaGuide",
        "Entry requirements and visa applications by nationality.",
        [
            (
                "Check requirements",
                "Which documents a traveler needs to enter a country.",
                ["travel", "immigration"],
            )
        ],
    ),
    "babysit": (
        "SitterFind",
        "Vetted childcare providers and nannies near you.",
        [("Find sitter", "Matches families with available nannies.", ["childcare", "family"])],
    ),
    "cleaning": (
        "SparkleHome",
        "House cleaning services booked by the hour.",
        [("Book cleaner", "Schedules a home cleaner.", ["home services", "cleaning"])],
    ),
    "moving": (
        "BoxMovers",
        "Removal company quotes and moving van booking.",
        [
            (
                "Quote move",
                "Estimates the cost of relocating household goods.",
                ["relocation", "home services"],
            )
        ],
    ),
    "charity": (
        "GiveWell Agent",
        "Donation recommendations to effective charities.",
        [
            (
                "Recommend charity",
                "Suggests nonprofits by cause and impact.",
                ["philanthropy", "nonprofit"],
            )
        ],
    ),
}

# key: (name, category, description, [capabilities])
ENTITIES = {
    "ent_sushi": (
        "Sakura Sushi Bar",
        "restaurant",
        "Japanese restaurant in Lyon with omakase and sushi counter.",
        ["reservation", "menu", "takeaway"],
    ),
    "ent_pizza": (
        "Napoli Forno",
        "restaurant",
        "Wood-fired pizzeria in Naples.",
        ["menu", "delivery", "reservation"],
    ),
    "ent_steak": (
        "Prime Cut Grill",
        "restaurant",
        "Steakhouse in Chicago with dry-aged beef.",
        ["reservation", "menu"],
    ),
    "ent_vegan": (
        "Green Bowl",
        "restaurant",
        "Plant-based café in Berlin, vegan brunch.",
        ["menu", "ordering"],
    ),
    "ent_hotel_paris": (
        "Hôtel Lumière",
        "hotel",
        "Boutique hotel in Paris near the Louvre.",
        ["room booking", "availability"],
    ),
    "ent_hostel": (
        "Backpack Base",
        "hostel",
        "Budget dormitory beds in Lisbon for backpackers.",
        ["bed booking", "availability"],
    ),
    "ent_resort": (
        "Coral Bay Resort",
        "resort",
        "Beachfront all-inclusive resort in Cancún.",
        ["room booking", "spa booking"],
    ),
    "ent_dentist": (
        "BrightSmile Dental",
        "dentist",
        "Dental clinic in Austin: cleanings, fillings, whitening.",
        ["appointment booking"],
    ),
    "ent_clinic": (
        "Riverside Family Clinic",
        "clinic",
        "General practitioners and walk-in care in Leeds.",
        ["appointment booking", "prescriptions"],
    ),
    "ent_pharmacy": (
        "CityCare Pharmacy",
        "pharmacy",
        "Pharmacy in Toronto with prescription refills and vaccinations.",
        ["prescription refill", "opening hours"],
    ),
    "ent_gym": (
        "IronWorks Gym",
        "gym",
        "Fitness club in Denver with classes and personal trainers.",
        ["class booking", "membership"],
    ),
    "ent_yoga": (
        "Lotus Studio",
        "yoga studio",
        "Yoga and pilates classes in Bristol.",
        ["class booking"],
    ),
    "ent_salon": (
        "Mane Street Salon",
        "hair salon",
        "Haircuts, coloring and styling in Melbourne.",
        ["appointment booking"],
    ),
    "ent_barber": (
        "Sharp Fade Barbers",
        "barber",
        "Traditional barbershop in Glasgow: fades and beard trims.",
        ["walk-in queue", "appointment booking"],
    ),
    "ent_bakery": (
        "Golden Crust Bakery",
        "bakery",
        "Artisan sourdough bread and pastries in Portland.",
        ["pre-order", "opening hours"],
    ),
    "ent_florist": (
        "Petal & Stem",
        "florist",
        "Flower shop in Dublin with same-day bouquet delivery.",
        ["delivery", "ordering"],
    ),
    "ent_bookshop": (
        "Chapter One Books",
        "bookstore",
        "Independent bookstore in Edinburgh.",
        ["catalog search", "ordering"],
    ),
    "ent_hardware": (
        "Fix-It Hardware",
        "hardware store",
        "Tools, paint and building supplies in Phoenix.",
        ["stock check", "ordering"],
    ),
    "ent_mechanic": (
        "AutoCare Garage",
        "car repair",
        "Car repair workshop in Manchester: brakes, tyres, servicing.",
        ["appointment booking", "quote"],
    ),
    "ent_vet": (
        "Paws Veterinary",
        "veterinarian",
        "Animal hospital in Seattle for dogs and cats.",
        ["appointment booking", "emergency line"],
    ),
    "ent_museum": (
        "City Museum of Art",
        "museum",
        "Art museum in Madrid with modern collections.",
        ["ticket booking", "opening hours"],
    ),
    "ent_cinema": (
        "Starlight Cinema",
        "cinema",
        "Movie theater in Sydney showing new releases.",
        ["showtimes", "ticket booking"],
    ),
    "ent_laundry": (
        "Fresh Spin Laundromat",
        "laundry",
        "Self-service laundry and dry cleaning in Boston.",
        ["pickup booking", "opening hours"],
    ),
    "ent_plumber": (
        "FlowRight Plumbing",
        "plumber",
        "Emergency plumbing repairs in Houston.",
        ["callout booking", "quote"],
    ),
    "ent_lawyer": (
        "Hart & Cole Solicitors",
        "law firm",
        "Family law and conveyancing in Cardiff.",
        ["consultation booking"],
    ),
    "ent_school": (
        "Bright Minds Tutoring",
        "tutoring center",
        "After-school tutoring in math and reading in Ottawa.",
        ["lesson booking"],
    ),
    "ent_spa": (
        "Serenity Day Spa",
        "spa",
        "Massages and facials in Scottsdale.",
        ["treatment booking"],
    ),
    "ent_car_rental": (
        "RoadAway Rentals",
        "car rental",
        "Car hire at Dublin airport.",
        ["vehicle booking", "availability"],
    ),
    "ent_coworking": (
        "Hive Workspace",
        "coworking",
        "Shared office desks and meeting rooms in Amsterdam.",
        ["desk booking", "room booking"],
    ),
    "ent_petshop": (
        "Happy Tails Pet Store",
        "pet store",
        "Pet food and supplies in Austin.",
        ["ordering", "stock check"],
    ),
}

# (query, relevant keys, kind)
QUERIES = [
    (
        "book a table for four tonight",
        ["restaurant", "ent_sushi", "ent_steak", "ent_pizza"],
        "paraphrase",
    ),
    ("turn speech into text", ["transcribe"], "paraphrase"),
    ("cheap plane tickets to Rome", ["flights"], "paraphrase"),
    (
        "somewhere to sleep on my trip",
        ["hotel", "ent_hotel_paris", "ent_hostel", "ent_resort"],
        "paraphrase",
    ),
    ("will it rain tomorrow", ["weather"], "paraphrase"),
    ("put this French letter into English", ["translate"], "paraphrase"),
    ("pay my suppliers' bills automatically", ["invoice"], "paraphrase"),
    ("hire the best applicant for a job opening", ["resume"], "paraphrase"),
    ("check my code changes before merging", ["code_review"], "paraphrase"),
    ("file my yearly taxes", ["tax"], "paraphrase"),
    ("what does this agreement commit me to", ["legal"], "paraphrase"),
    (
        "I have a fever and a sore throat, should I see a doctor",
        ["symptom", "ent_clinic"],
        "paraphrase",
    ),
    ("get in shape at home", ["fitness"], "paraphrase"),
    ("what can I cook with eggs and spinach", ["recipe"], "paraphrase"),
    ("bring milk and bread to my house", ["grocery"], "paraphrase"),
    ("get me a cab to the airport", ["ride"], "paraphrase"),
    ("where is my package", ["parcel"], "paraphrase"),
    ("how many yen is 100 dollars", ["currency"], "paraphrase"),
    ("how is Apple stock doing", ["stocks"], "paraphrase"),
    ("how much bitcoin is in this address", ["crypto"], "paraphrase"),
    ("answer this message from my boss", ["email_draft"], "paraphrase"),
    ("find a time when the whole team is free", ["calendar"], "paraphrase"),
    ("give me the short version of this long document", ["summarize"], "paraphrase"),
    ("draw a picture of a cat astronaut", ["image_gen"], "paraphrase"),
    ("read the words in this photographed receipt", ["ocr"], "paraphrase"),
    ("are customers happy with our product", ["sentiment"], "paraphrase"),
    ("appear higher in Google results", ["seo"], "paraphrase"),
    ("lower what we spend per click on campaigns", ["ads"], "paraphrase"),
    ("reply to customer complaints", ["support"], "paraphrase"),
    ("which prospects will close this quarter", ["crm"], "paraphrase"),
    ("pay my employees at the end of the month", ["payroll"], "paraphrase"),
    ("claim back my business travel costs", ["expense"], "paraphrase"),
    ("is my server exposed to known exploits", ["vuln"], "paraphrase"),
    ("is this email a scam", ["phishing"], "paraphrase"),
    ("tell me when my website goes down", ["uptime"], "paraphrase"),
    ("ask my database a question in plain English", ["sql"], "paraphrase"),
    ("help my kid with algebra homework", ["tutor_math", "ent_school"], "paraphrase"),
    ("practice speaking Spanish", ["language_learn"], "paraphrase"),
    ("songs for a rainy afternoon", ["music"], "paraphrase"),
    ("what should I watch tonight", ["movie", "ent_cinema"], "paraphrase"),
    ("apartment to rent downtown", ["real_estate"], "paraphrase"),
    ("how much would my monthly home loan payment be", ["mortgage"], "paraphrase"),
    ("my car makes a strange noise when braking", ["car_repair", "ent_mechanic"], "paraphrase"),
    ("my dog is vomiting", ["pet", "ent_vet"], "paraphrase"),
    ("what is this flower in my garden", ["plants"], "paraphrase"),
    ("seats for the football match on Saturday", ["event_tickets"], "paraphrase"),
    ("read my blog post out loud", ["speech_synth"], "paraphrase"),
    ("add captions to my clip", ["video_edit"], "paraphrase"),
    ("did this student copy their essay", ["plagiarism"], "paraphrase"),
    ("why is my power bill so high", ["energy"], "paraphrase"),
    ("put panels on my roof", ["solar"], "paraphrase"),
    ("fastest way for my drivers to visit all customers", ["route_plan"], "paraphrase"),
    ("what documents do I need to travel to Japan", ["visa"], "paraphrase"),
    ("someone to watch my children on Friday evening", ["babysit"], "paraphrase"),
    ("relocate my furniture to a new flat", ["moving"], "paraphrase"),
    ("get my teeth cleaned", ["ent_dentist"], "paraphrase"),
    ("refill my prescription", ["ent_pharmacy", "ent_clinic"], "paraphrase"),
    ("trim my beard", ["ent_barber", "ent_salon"], "paraphrase"),
    ("fresh sourdough near me", ["ent_bakery"], "paraphrase"),
    ("send roses to my mother", ["ent_florist"], "paraphrase"),
    ("my sink is leaking", ["ent_plumber"], "paraphrase"),
    ("a massage this weekend", ["ent_spa"], "paraphrase"),
    ("hire a vehicle when I land", ["ent_car_rental"], "paraphrase"),
    ("a desk to work from for a week", ["ent_coworking"], "paraphrase"),
    ("restaurant reservations", ["restaurant"], "keyword"),
    ("audio transcription", ["transcribe"], "keyword"),
    ("PDF table extraction", ["pdf_tables"], "keyword"),
    ("invoice capture", ["invoice"], "keyword"),
    ("contract analysis", ["legal"], "keyword"),
    ("sentiment analysis", ["sentiment"], "keyword"),
    ("vulnerability scanning", ["vuln"], "keyword"),
    ("mortgage", ["mortgage"], "keyword"),
    ("wedding planning", ["wedding"], "keyword"),
    ("plagiarism detection", ["plagiarism"], "keyword"),
    ("playlist", ["music"], "keyword"),
    ("logo design", ["logo"], "keyword"),
    ("citation formatting", ["citation"], "keyword"),
    ("yoga classes", ["ent_yoga"], "keyword"),
    ("bookstore", ["ent_bookshop"], "keyword"),
    ("laundry", ["ent_laundry"], "keyword"),
]
