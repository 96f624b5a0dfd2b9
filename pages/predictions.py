from ui.predictions.page import render
render()
