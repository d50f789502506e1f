raise ImportError('shadowing response is broken')
