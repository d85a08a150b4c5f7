"""The embedded offline provider: a useful assistant with no network and no API key.

provider.py  the provider: a plan on the user's message, the next call on results, the answer
asks.py      a message of two asks, an injected order beside a read, out of scope, follow-ups
understanding.py  what a request means, from the three parts below together
words.py     the verbs and phrases it acts on, loaded from seed_data/offline_words.json
linking.py   which materials it names (places.py: warehouses, categories, suppliers)
classifier.py  how it asks: a linear model over character n-grams, trained on example phrases
labels.py    the classifier's label read again with what else the request says
slots.py     its quantities, units, packs, periods, dates and codes
amounts.py   how much of the material they say (packs its spec names, a bare number to ask about)
answers.py   the answer written from tool results
"""
