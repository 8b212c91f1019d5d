# Legit tool: an Excel workbook with several sheets (pandas ExcelWriter with openpyxl),
# column widths and a number format set through openpyxl, read back with pd.read_excel.
# Covers: pd.ExcelWriter('artifacts/report.xlsx', engine='openpyxl'), to_excel of three
#   sheets (one with a MultiIndex), openpyxl worksheet column_dimensions and number_format,
#   freeze_panes, pd.read_excel(sheet_name=None) of every sheet, openpyxl.load_workbook of
#   the file (read_only).
# Proof: RESULT lines (sheets, shapes and values read back) equal the host run's. The
#   workbook's bytes hold the time it was written (docProps, zip entry dates): the test only
#   checks it is there, as a zip (its bytes vary by design).
# inputs: sales.csv regions.csv
# varying artifacts: report.xlsx
import openpyxl
import pandas as pd

sales = pd.read_csv("inputs/sales.csv", parse_dates=["date"])
regions = pd.read_csv("inputs/regions.csv")
by_region = sales.groupby("region").agg(orders=("revenue", "size"), revenue=("revenue", "sum")).round(2)
by_month_product = sales.groupby([sales["date"].dt.strftime("%Y-%m"), "product"])["units"].sum().to_frame()

with pd.ExcelWriter("artifacts/report.xlsx", engine="openpyxl") as writer:
    by_region.to_excel(writer, sheet_name="Regions")
    by_month_product.to_excel(writer, sheet_name="Monthly units")
    regions.to_excel(writer, sheet_name="Managers", index=False)
    ws = writer.sheets["Regions"]
    ws.column_dimensions["A"].width = 14
    ws.freeze_panes = "B2"
    for cell in ws["C"][1:]:
        cell.number_format = "#,##0.00"

sheets = pd.read_excel("artifacts/report.xlsx", sheet_name=None)
regions_back = pd.read_excel("artifacts/report.xlsx", sheet_name="Regions", index_col=0)
wb = openpyxl.load_workbook("artifacts/report.xlsx", read_only=True)
formats = {c.number_format for row in wb["Regions"].iter_rows(min_row=2, min_col=3, max_col=3) for c in row}
names = wb.sheetnames
wb.close()

print(f"RESULT: sheets={list(sheets)} shapes={[s.shape for s in sheets.values()]}")
print(f"RESULT: regions equal={regions_back.equals(by_region)} total={regions_back['revenue'].sum():.2f}")
print(f"RESULT: managers={sheets['Managers']['manager'].tolist()[:2]} formats={sorted(formats)} names={names}")
