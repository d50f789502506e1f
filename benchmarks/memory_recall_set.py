"""A labelled recall set for memory embedders: 60 facts, each with a paraphrased question (few shared
words, so lexical matching alone does poorly), hidden among 480 generated distractor memories."""
from __future__ import annotations

import random

PAIRS = [
    ("The user's favourite hot drink is jasmine green tea.", "What does the user like to drink when it is cold?"),
    ("Production database backups run every night at 02:00 UTC.", "When are the prod DB snapshots taken?"),
    ("The staging cluster is hosted in Frankfurt on AWS eu-central-1.", "Which region is the pre-release environment in?"),
    ("Quarterly sales reports are due on the fifth working day of the quarter.", "Deadline for the three-monthly revenue summary?"),
    ("The user's cat is named Miso and is allergic to chicken.", "What is the pet called and what can't it eat?"),
    ("Our CI pipeline uses GitHub Actions with a self-hosted runner.", "Which system runs the automated builds?"),
    ("The user prefers answers in British English spelling.", "Which spelling conventions should replies follow?"),
    ("API keys are rotated every 90 days by the security team.", "How often do credentials get replaced?"),
    ("The marketing website is built with Hugo and deployed to Netlify.", "What static site generator powers the promo pages?"),
    ("Invoices over 5,000 euros need approval from the finance director.", "Who signs off on large bills?"),
    ("The user's daughter plays the cello in the school orchestra.", "What instrument does the kid play?"),
    ("Python 3.12 is the minimum version supported by the analytics package.", "Oldest interpreter release the data library works with?"),
    ("The office Wi-Fi password changes on the first Monday of each month.", "When is the wireless passphrase updated?"),
    ("Customer support tickets are triaged in Zendesk within four hours.", "How quickly are help desk requests sorted?"),
    ("The user is vegetarian but eats fish occasionally.", "Any dietary restrictions for dinner plans?"),
    ("Log files older than 30 days are moved to Glacier storage.", "What happens to old application logs?"),
    ("The recommendation model is retrained every Sunday on the last 12 weeks of clicks.", "How often is the suggestion engine refreshed?"),
    ("The user's flight to Lisbon leaves Tuesday at 7:40 from gate B12.", "When does the trip to Portugal depart?"),
    ("Kubernetes pods in the payments namespace are limited to 2 GiB of memory.", "Resource cap for the billing services' containers?"),
    ("The team stand-up meeting is at 9:15 every weekday on Zoom.", "What time is the daily sync call?"),
    ("The user's laptop is a 2023 ThinkPad X1 Carbon running Fedora.", "What computer and OS does the user work on?"),
    ("Feature flags are managed in LaunchDarkly, never in config files.", "Where do we toggle experimental functionality?"),
    ("The data warehouse is Snowflake and dbt builds the models nightly.", "Which analytics database and transformation tool are used?"),
    ("Pull requests need two approving reviews before merging to main.", "How many sign-offs does a code change require?"),
    ("The user is allergic to penicillin.", "Is there any medication the user must avoid?"),
    ("The mobile app supports iOS 16 and newer only.", "Minimum iPhone system version for the app?"),
    ("The holiday party is on December 12th at the rooftop bar on Elm Street.", "Where and when is the end-of-year celebration?"),
    ("Error rates above 2% for five minutes page the on-call engineer.", "What triggers an alert to whoever is on duty?"),
    ("The user's preferred plotting library is Altair rather than matplotlib.", "Which charting tool should be used for visualisations?"),
    ("The company VPN uses WireGuard with certificates issued by Vault.", "How does remote network access work?"),
    ("Translations are stored in Crowdin and synced weekly.", "Where do localisation strings live?"),
    ("The user runs half marathons and trains on Tuesday and Saturday mornings.", "What sport does the user do and when?"),
    ("Docker images are scanned with Trivy before being pushed to the registry.", "How are container builds checked for vulnerabilities?"),
    ("The legal team requires a DPA for any vendor processing customer data.", "What paperwork do suppliers handling personal info need?"),
    ("The user's mother lives in Kraków and visits every August.", "Where is the user's mum based?"),
    ("Search uses Elasticsearch 8 with a custom synonym list for product names.", "What engine serves product lookups?"),
    ("The monthly cloud budget is capped at 40,000 dollars.", "How much can we spend on hosting per month?"),
    ("The user wants code examples with type hints and docstrings.", "How should sample code be written for this person?"),
    ("Weekly newsletters go out Thursday at 10:00 via Mailchimp.", "When is the email digest sent?"),
    ("Passwords must be at least 14 characters with no forced rotation.", "What is the password policy?"),
    ("The GPU training box has four A100 cards and 512 GB of RAM.", "What hardware is in the machine-learning server?"),
    ("The user's car is an electric Kia EV6 charged at home overnight.", "What vehicle does the user drive?"),
    ("Frontend state is managed with Redux Toolkit and RTK Query.", "Which state-management approach does the web client use?"),
    ("Support for Internet Explorer was dropped in 2022.", "Do we still care about the old Microsoft browser?"),
    ("The user speaks Spanish and Portuguese in addition to English.", "Which languages does the user know?"),
    ("All timestamps in the event store are kept in UTC, never local time.", "What timezone convention do stored events follow?"),
    ("The design system lives in Figma and is published as a React component library.", "Where are the UI building blocks defined?"),
    ("Refunds are processed within 14 days through Stripe.", "How long until customers get their money back?"),
    ("The user dislikes long meetings and prefers written updates.", "How does the user like to receive status information?"),
    ("Terraform state is stored in an S3 bucket with DynamoDB locking.", "Where is infrastructure-as-code state kept?"),
    ("The user's birthday is on March 3rd.", "When should we wish the user many happy returns?"),
    ("Load tests are run with k6 against the staging environment before each release.", "How do we check performance before shipping?"),
    ("The chatbot escalates to a human after two failed answers.", "When does the assistant hand over to a person?"),
    ("The user keeps their notes in Obsidian synced through iCloud.", "What note-taking app does the user use?"),
    ("New employees get a MacBook Pro and a hardware security key on day one.", "What equipment do starters receive?"),
    ("The inventory service is written in Go and talks to PostgreSQL 16.", "What language and database does stock tracking use?"),
    ("The user is colour-blind (deuteranopia), so avoid red-green contrasts.", "Any accessibility needs when choosing chart colours?"),
    ("Backups are tested by a full restore drill every quarter.", "How do we verify that recovery actually works?"),
    ("The company's fiscal year starts on April 1st.", "When does the financial year begin?"),
    ("The user's home internet is fibre with 1 Gbit/s down and 100 Mbit/s up.", "How fast is the user's broadband?"),
]

_SUBJECTS = ["The billing team", "Our Berlin office", "The QA group", "The research lab", "The support desk",
             "The mobile squad", "The platform team", "The data guild", "Marketing", "The legal department",
             "The user's neighbour", "The user's brother", "The sales team", "The design crew", "Operations"]
_VERBS = ["reviews", "updates", "archives", "migrates", "audits", "prints", "renames", "benchmarks", "documents",
          "schedules", "translates", "encrypts"]
_OBJECTS = ["the onboarding checklist", "customer feedback forms", "the quarterly roadmap", "old shipping labels",
            "the parking rota", "coffee machine orders", "the fire drill plan", "conference badges",
            "the style guide", "printer toner requests", "the seating chart", "training videos",
            "the vendor list", "expense templates", "the holiday calendar", "board slides"]
_WHEN = ["every Monday", "once a year", "after each sprint", "on the last Friday of the month", "before lunch",
         "twice a week", "when a ticket is closed", "in January", "every evening", "at the start of each quarter"]


def distractors(n: int = 480, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        out.add(f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_WHEN)}.")
    return sorted(out)


def recall_set() -> tuple[list[str], list[tuple[str, int]]]:
    """(memories, [(query, index of the right memory)]): 540 memories, 60 labelled queries."""
    memories = [fact for fact, _ in PAIRS] + distractors()
    return memories, [(query, i) for i, (_, query) in enumerate(PAIRS)]
